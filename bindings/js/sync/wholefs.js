// Whole writes in a repository folder, for isomorphic-git in Node.
//
// isomorphic-git writes a reference, HEAD, the index, the config and every
// loose object with writeFile, which truncates the file, then writes it: a
// sync killed between the two (SIGKILL, a crash, a full disk) leaves the
// file empty or half written, and every later sync of the root, and git
// itself, fails on it; the branch's last commit is then found only by
// hand. Git writes each of them to a lock file and renames it into place.
// wholeGitWrites gives isomorphic-git Node's fs with that done for it: a
// file written inside a `.git` folder goes to a new file in that folder,
// synced, then renamed over the old one, so a reader or the next process
// finds the old file or the new one, never part of either. The Go host
// does the same for go-git (host/gitsync/gitdir.go).

/** New files are named so until renamed into place: in the repository
 * folder itself, where a file a killed process left is read as nothing
 * (in refs/ it would be read as a reference). */
const TMP_PREFIX = 'arbor-write-';

/** Left-overs of killed writes older than this are removed. */
const STALE_MS = 60 * 60 * 1000;

let seq = 0;

/**
 * Node's fs with whole writes inside `.git` folders.
 *
 * @param {typeof import('node:fs')} fs
 * @returns {typeof import('node:fs')}
 */
export function wholeGitWrites(fs) {
  const p = fs.promises;
  /** @type {Set<string>} the repository folders swept in this process */
  const swept = new Set();

  /**
   * @param {import('node:fs').PathLike} file
   * @param {any} data
   * @param {any} [options]
   */
  async function writeFile(file, data, options) {
    const gitdir = gitdirOf(String(file));
    if (gitdir === null) return p.writeFile(file, data, options);
    if (!swept.has(gitdir)) {
      swept.add(gitdir);
      await sweep(p, gitdir);
    }
    const mode = typeof options === 'object' && options !== null && options.mode !== undefined ? options.mode : 0o666;
    const encoding = typeof options === 'string' ? options : options?.encoding;
    let tmp = '';
    let h;
    // A name a killed process left (its pid reused since) is passed over.
    for (let tries = 0; ; tries++) {
      tmp = `${gitdir}/${TMP_PREFIX}${process.pid}-${++seq}-${Math.floor(Math.random() * 0x100000000).toString(16)}`;
      try {
        h = await p.open(tmp, 'wx', mode);
        break;
      } catch (err) {
        if (/** @type {any} */ (err).code !== 'EEXIST' || tries >= 7) throw err;
      }
    }
    try {
      try {
        await h.writeFile(data, encoding ? { encoding } : undefined);
        await h.sync();
      } finally {
        await h.close();
      }
      await p.rename(tmp, file);
    } catch (err) {
      await p.rm(tmp, { force: true });
      throw err;
    }
  }

  const promises = new Proxy(p, {
    get(target, key) {
      if (key === 'writeFile') return writeFile;
      const v = Reflect.get(target, key);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  // isomorphic-git takes `promises` when it is an own, enumerable property.
  return /** @type {typeof import('node:fs')} */ ({ ...fs, promises });
}

/**
 * The `.git` folder a path is inside, or null.
 *
 * @param {string} path
 */
function gitdirOf(path) {
  const i = path.replaceAll('\\', '/').lastIndexOf('/.git/');
  return i < 0 ? null : path.slice(0, i + 5);
}

/**
 * Removes what killed writes left in gitdir, once old enough that no
 * write running can be theirs.
 *
 * @param {typeof import('node:fs').promises} p
 * @param {string} gitdir
 */
async function sweep(p, gitdir) {
  let names;
  try {
    names = await p.readdir(gitdir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(TMP_PREFIX)) continue;
    try {
      const st = await p.stat(`${gitdir}/${name}`);
      if (Date.now() - st.mtimeMs > STALE_MS) await p.rm(`${gitdir}/${name}`, { force: true });
    } catch {
      // gone meanwhile
    }
  }
}
