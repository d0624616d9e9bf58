// Syncing a memory root through git with isomorphic-git: the same steps as
// the Go host (host/gitsync, docs/sync.md). Commit the root's changes with
// a message made of the audited operations since the last sync, fetch the
// branch, bring it in (nothing, a fast-forward, or a merge of the two
// sides from their merge base, whose files both sides changed go through
// the engine's `merge` method, docs/ABI.md §4.15), commit the merge with
// both parents, push, and fetch and merge again when someone pushed in
// between. `.arbor/` is never committed.
//
// This file imports nothing of isomorphic-git: the caller hands it the
// library and its HTTP client (sync/index.js and sync/node.js do for
// bundlers and Node; a page without a bundler passes the UMD build's
// globals), so that one algorithm serves every environment and the package
// itself never loads git unless a memory syncs.
//
// Where the repository lives depends on the storage:
// - a folder (nodeFs, in Node, given the `fs` module): the folder is the
//   work tree of an ordinary repository in its `.git`, which people can
//   also handle with git and the Go CLI's `arbor sync`;
// - any other storage (IndexedDB in a browser, memory): isomorphic-git
//   works on the storage itself through a small adapter (storageFs), its
//   git directory kept under `.arbor/git`, the engine's private folder: a
//   storage accepts no other dot-folder, `.arbor/` is never committed, and
//   an IndexedDB storage saves the repository with the tree in one
//   transaction, so the two cannot drift apart. Such a storage keeps no
//   dot-files (`.gitignore`): those stay in git, in the index only.

import { ArborError } from '../error.js';
import { StorageError } from '../storage/errors.js';
import { sameBytes } from '../bytes.js';
import { pathProblem } from '../paths.js';

/** The remote a root syncs with. */
const REMOTE = 'origin';
/** The branch of a root that has none yet. */
const DEFAULT_BRANCH = 'main';
/** How often a sync fetches and merges again when its push is refused because the remote moved on. */
const MAX_ROUNDS = 3;
/** How many operations a commit message lists one by one. */
const MAX_LISTED = 30;
/** The engine's private folder; never committed. */
const STATE_DIR = '.arbor';
/** The sync's own record, shared with the Go host. */
const STATE_FILE = `${STATE_DIR}/sync.json`;
const AUDIT_FILE = `${STATE_DIR}/audit.jsonl`;
/** The git directory of a root kept in a storage other than a folder. */
const STORAGE_GITDIR = `/${STATE_DIR}/git`;
const ZERO = new Uint8Array(0);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * @typedef {import('./index.d.ts').GitSyncOptions} GitSyncOptions
 * @typedef {import('../index.d.ts').GitSync} GitSync
 * @typedef {import('../index.d.ts').SyncRun} SyncRun
 * @typedef {import('../index.d.ts').SyncOptions} SyncOptions
 * @typedef {import('../index.d.ts').SyncReport} SyncReport
 * @typedef {import('../index.d.ts').SyncStatus} SyncStatus
 * @typedef {import('../index.d.ts').SyncStep} SyncStep
 * @typedef {import('../index.d.ts').MergedFile} MergedFile
 * @typedef {import('../storage/types.d.ts').Storage} Storage
 * @typedef {{ fs: any, dir: string, gitdir: string, cache: object }} Repo where isomorphic-git finds the repository
 */

/**
 * The sync adapter over the isomorphic-git module `git` and its HTTP
 * client `http`; `fs` is Node's fs module, for roots in a folder.
 *
 * @type {typeof import('./core.d.ts').gitSyncWith}
 */
export function gitSyncWith({ git, http, fs, turn }) {
  if (!git || typeof git.statusMatrix !== 'function') throw new TypeError('arbor: gitSync needs the isomorphic-git module as `git`');
  if (!http || typeof http.request !== 'function') throw new TypeError('arbor: gitSync needs an isomorphic-git HTTP client as `http`');
  return {
    sync: (run, options) => sync(git, http, fs, turn, run, options),
    status: (run, options) => status(git, http, fs, run, options),
  };
}

/**
 * Where the repository of the storage is, and the fs isomorphic-git uses.
 *
 * @param {Storage & { root?: unknown }} storage
 * @param {any} fs
 * @returns {Repo & { folder: boolean }}
 */
function locate(storage, fs) {
  if (fs && typeof storage.root === 'string') {
    return { fs, dir: storage.root, gitdir: `${storage.root}/.git`, cache: {}, folder: true };
  }
  return { fs: storageFs(storage), dir: '/', gitdir: STORAGE_GITDIR, cache: {}, folder: false };
}

/**
 * The isomorphic-git callbacks of the sync's options.
 *
 * @param {SyncOptions} o
 */
function transport(o) {
  const { auth, corsProxy } = o;
  /** @type {Record<string, unknown>} */
  const t = {};
  if (corsProxy) t.corsProxy = corsProxy;
  if (auth) {
    if (typeof auth.token !== 'string' || auth.token === '') throw new ArborError('invalid_params', 'sync: auth.token must be a non-empty string');
    t.onAuth = () => ({ username: auth.username ?? 'arbor', password: auth.token });
    // Without it a refused token would be asked for again and again.
    t.onAuthFailure = () => ({ cancel: true });
  }
  return t;
}

/**
 * Wraps a failure of git or of the remote so that callers branch on one code.
 *
 * @param {string} what
 * @param {unknown} err
 */
function failed(what, err) {
  if (err instanceof ArborError) return err;
  const e = /** @type {Error} */ (err);
  return new ArborError('sync', `sync: ${what}: ${e?.message ?? e}`, { cause: err });
}

/**
 * @param {any} git
 * @param {any} http
 * @param {any} fs
 * @param {GitSyncOptions['turn']} turn
 * @param {SyncRun} run
 * @param {SyncOptions} [options]
 * @returns {Promise<SyncReport>}
 */
async function sync(git, http, fs, turn, run, options = {}) {
  const { storage, merge, changed } = run;
  const { remote, branch: wanted, onProgress } = options;
  const t = transport(options);
  // A remote given is tried before anything is made or remembered, so that
  // a wrong URL leaves the root as it was.
  if (remote) {
    try {
      await git.listServerRefs({ http, url: remote, prefix: 'refs/heads/', ...t });
    } catch (err) {
      throw failed(`remote ${redact(remote)}`, err);
    }
  }
  const repo = locate(storage, fs);
  // Syncs of one folder take turns, across processes and with the Go host;
  // the root's own lock is held only to commit and to merge, not while the
  // remote is waited for, so that other processes keep writing meanwhile.
  const releaseTurn = repo.folder && turn ? await turn(repo.dir) : () => {};
  try {
    const g = { ...repo, git };
    const branch = await openRepo(g, wanted, Boolean(remote));
    const url = await setRemote(g, remote);
    /** @type {SyncReport} */
    const rep = {
      branch,
      remote: redact(url),
      operations: 0,
      merge: 'initial',
      ahead: 0,
      behind: 0,
      changed: [],
      conflicts: [],
      pushed: false,
      head: '',
    };
    /** @type {(phase: SyncStep['phase'], round: number, message: string) => void} */
    const step = (phase, round, message) => onProgress?.({ phase, round, message });
    const last = readState(storage);
    // Records the root's changes since the last commit: the first call's
    // are the sync's own commit; a later round's are what others wrote
    // while this sync was on the network.
    const commit = async () => {
      const c = await commitLocal(g, storage, branch, last, repo.folder);
      if (!c) return;
      rep.committed ??= c.oid;
      rep.operations += c.operations;
      last.auditBytes = auditSize(storage);
    };
    step('commit', 0, "committing the root's changes");
    await locked(storage, commit);
    for (let round = 1; ; round++) {
      step('fetch', round, `fetching ${REMOTE}/${branch} from ${rep.remote}`);
      const found = await fetchBranch(g, http, url, branch, t);
      rep.merge = 'initial';
      await locked(storage, async () => {
        await commit();
        if (!found) return;
        step('merge', round, `merging ${REMOTE}/${branch}`);
        rep.behind += await countNotIn(g, await remoteHead(g, branch), await localHead(g, branch));
        await integrate(g, storage, repo.folder, merge, branch, rep, changed);
      });
      const head = await localHead(g, branch);
      if (!head) throw new ArborError('sync', `sync: nothing to push: the root has no files and the remote no branch ${branch}`);
      rep.ahead = await countNotIn(g, head, await remoteHead(g, branch));
      step('push', round, `pushing ${branch} to ${rep.remote}`);
      try {
        await git.push({ ...g, http, remote: REMOTE, ref: branch, remoteRef: branch, ...t });
      } catch (err) {
        if (rejected(err) && round < MAX_ROUNDS) continue;
        throw failed(`push ${branch}`, err);
      }
      break;
    }
    rep.pushed = true;
    rep.head = /** @type {string} */ (await localHead(g, branch));
    writeState(storage, { lastSync: new Date().toISOString(), head: rep.head, auditBytes: last.auditBytes ?? 0 });
    rep.changed = [...changed].sort();
    return rep;
  } finally {
    releaseTurn();
  }
}

/**
 * Runs fn holding the root's lock (a folder's, which other processes honour).
 *
 * @template T
 * @param {Storage} storage
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function locked(storage, fn) {
  try {
    storage.lock?.();
  } catch (err) {
    throw failed('the root is busy', err);
  }
  try {
    return await fn();
  } finally {
    storage.unlock?.();
  }
}

/**
 * Whether a push failed because the remote branch moved on.
 *
 * @param {unknown} err
 */
function rejected(err) {
  const e = /** @type {{ code?: string, message?: string }} */ (err);
  return e?.code === 'PushRejectedError' || (e?.code === 'GitPushError' && /non-fast-forward|fetch first|stale info/.test(e.message ?? ''));
}

/**
 * Opens (or, `create`, makes) the repository, and names the branch to sync:
 * `wanted`, else the current one, else main.
 *
 * @param {Repo & { git: any }} g
 * @param {string | undefined} wanted
 * @param {boolean} create
 * @returns {Promise<string>}
 */
async function openRepo(g, wanted, create) {
  const { git } = g;
  let exists = true;
  try {
    await git.resolveRef({ ...g, ref: 'HEAD', depth: 1 });
  } catch {
    exists = false;
  }
  if (!exists) {
    if (!create) throw new ArborError('sync', 'sync: the root is not a git repository yet: sync with a remote ({ remote: URL }) to make it one');
    try {
      await git.init({ ...g, defaultBranch: wanted || DEFAULT_BRANCH });
    } catch (err) {
      throw failed('make the repository', err);
    }
  }
  if (wanted) return wanted;
  try {
    return (await git.currentBranch({ ...g })) || DEFAULT_BRANCH;
  } catch {
    return DEFAULT_BRANCH;
  }
}

/**
 * Makes `url` the root's origin (when given) and returns the origin's URL.
 *
 * @param {Repo & { git: any }} g
 * @param {string | undefined} url
 */
async function setRemote(g, url) {
  const remotes = /** @type {{ remote: string, url: string }[]} */ (await g.git.listRemotes({ ...g }));
  const origin = remotes.find((r) => r.remote === REMOTE);
  if (!url) {
    if (!origin) throw new ArborError('sync', 'sync: no remote: pass { remote: URL } (it is remembered as the root\'s origin)');
    return origin.url;
  }
  if (origin?.url !== url) await g.git.addRemote({ ...g, remote: REMOTE, url, force: true });
  return url;
}

/**
 * The commit a branch points at, null before the first.
 *
 * @param {Repo & { git: any }} g
 * @param {string} branch
 * @returns {Promise<string | null>}
 */
async function localHead(g, branch) {
  return resolve(g, `refs/heads/${branch}`);
}

/**
 * The remote branch as last fetched, null when there is none.
 *
 * @param {Repo & { git: any }} g
 * @param {string} branch
 */
async function remoteHead(g, branch) {
  return resolve(g, `refs/remotes/${REMOTE}/${branch}`);
}

/**
 * @param {Repo & { git: any }} g
 * @param {string} ref
 * @returns {Promise<string | null>}
 */
async function resolve(g, ref) {
  try {
    return await g.git.resolveRef({ ...g, ref });
  } catch (err) {
    if (/** @type {{ code?: string }} */ (err)?.code === 'NotFoundError') return null;
    throw failed(`read ${ref}`, err);
  }
}

/**
 * The rows of isomorphic-git's status of the root's files that differ from
 * the last commit, without `.arbor/` (and, for a storage, dot-files, which
 * it does not keep).
 *
 * @param {Repo & { git: any }} g
 * @param {Storage} storage
 * @param {boolean} folder
 * @returns {Promise<[string, number, number, number][]>}
 */
async function changedRows(g, storage, folder) {
  const { git } = g;
  // Only the top-level names outside .arbor/ are walked: the engine's
  // state (and, for a storage, the git directory) stays unread.
  const top = new Set();
  for (const e of storage.list('')) top.add(e.name);
  try {
    for (const e of await git.readTree({ ...g, oid: 'HEAD' }).then((/** @type {any} */ t) => t.tree)) top.add(e.path);
  } catch {
    // no commit yet
  }
  top.delete(STATE_DIR);
  top.delete('.git');
  if (!folder) for (const n of top) if (n.startsWith('.')) top.delete(n);
  if (top.size === 0) return [];
  /** @type {(p: string) => boolean} */
  const keep = folder ? (p) => !p.startsWith(`${STATE_DIR}/`) : (p) => !p.split('/').some((s) => s.startsWith('.'));
  /** @type {[string, number, number, number][]} */
  const rows = await git.statusMatrix({ ...g, filepaths: [...top], filter: keep });
  return rows.filter(([, head, work, stage]) => !(head === 1 && work === 1 && stage === 1));
}

/**
 * Commits every change of the root, with a message made of the audited
 * operations since the last sync; null when nothing changed.
 *
 * @param {Repo & { git: any }} g
 * @param {Storage} storage
 * @param {string} branch
 * @param {SyncState} last
 * @param {boolean} folder
 */
async function commitLocal(g, storage, branch, last, folder) {
  const { git } = g;
  const rows = await changedRows(g, storage, folder);
  if (rows.length === 0) return null;
  const paths = rows.map(([p]) => p).sort();
  await stage(g, folder, rows.map(([p, , work]) => ({ path: p, present: work !== 0 })));
  try {
    const { ops } = auditSince(storage, last);
    const oid = await git.commit({ ...g, ref: `refs/heads/${branch}`, message: commitMessage(ops, paths), author: await signature(g) });
    return { oid, operations: ops.length };
  } catch (err) {
    throw failed("commit the root's changes", err);
  }
}

/**
 * Who commits: the repository's git user, else Arbor.
 *
 * @param {Repo & { git: any }} g
 */
async function signature(g) {
  const name = await g.git.getConfig({ ...g, path: 'user.name' }).catch(() => undefined);
  const email = await g.git.getConfig({ ...g, path: 'user.email' }).catch(() => undefined);
  return name ? { name, email: email ?? '' } : { name: 'Arbor', email: 'arbor@localhost' };
}

/**
 * Fetches the branch into refs/remotes/origin/<branch>; false when the
 * remote has no such branch (an empty remote, or one not pushed yet).
 *
 * @param {Repo & { git: any }} g
 * @param {any} http
 * @param {string} url
 * @param {string} branch
 * @param {Record<string, unknown>} t
 */
async function fetchBranch(g, http, url, branch, t) {
  const { git } = g;
  try {
    const refs = /** @type {{ ref: string }[]} */ (await git.listServerRefs({ http, url, prefix: `refs/heads/${branch}`, ...t }));
    if (!refs.some((r) => r.ref === `refs/heads/${branch}`)) return false;
    await git.fetch({ ...g, http, remote: REMOTE, ref: branch, remoteRef: branch, singleBranch: true, tags: false, ...t });
    return true;
  } catch (err) {
    throw failed(`fetch ${branch} from ${redact(url)}`, err);
  }
}

/**
 * Brings the fetched remote branch into the local one: nothing when the
 * local one has it already, a fast-forward when it is behind, else a merge
 * commit with both parents.
 *
 * @param {Repo & { git: any }} g
 * @param {Storage} storage
 * @param {boolean} folder
 * @param {SyncRun['merge']} merge
 * @param {string} branch
 * @param {SyncReport} rep
 * @param {Set<string>} changed
 */
async function integrate(g, storage, folder, merge, branch, rep, changed) {
  const { git } = g;
  const local = await localHead(g, branch);
  const remote = await remoteHead(g, branch);
  if (!remote) return;
  rep.merge = 'none';
  if (local === remote) return;
  /** @type {string | null} */
  let base = null;
  if (local) {
    const bases = /** @type {string[]} */ (await git.findMergeBase({ ...g, oids: [local, remote] }));
    base = bases[0] ?? null;
    if (base === remote) return; // the remote's commits are all here already
  }
  const put = (/** @type {string} */ p, /** @type {Uint8Array | null} */ had, /** @type {Uint8Array | null} */ want) =>
    putFile(g, storage, folder, p, had, want, changed);

  if (!local || base === local) {
    rep.merge = 'fast-forward';
    /** @type {Staged[]} */
    const staged = [];
    const puts = [];
    for (const d of await diffTrees(g, local, remote)) puts.push({ path: d.path, had: await blob(g, d.a), want: await blob(g, d.b), oid: d.b });
    await untrackedInTheWay(g, storage, folder, puts);
    for (const d of puts) {
      await put(d.path, d.had, d.want);
      staged.push({ path: d.path, present: d.oid !== undefined, oid: d.oid });
    }
    await stage(g, folder, staged);
    await git.writeRef({ ...g, ref: `refs/heads/${branch}`, value: remote, force: true });
    await git.writeRef({ ...g, ref: 'HEAD', value: `refs/heads/${branch}`, symbolic: true, force: true });
    return;
  }

  rep.merge = 'merge';
  /** @type {Map<string, { base?: string, ours?: string, theirs?: string }>} */
  const files = new Map();
  for (const d of await diffTrees(g, base, local)) files.set(d.path, { base: d.a, ours: d.b, theirs: d.a });
  for (const d of await diffTrees(g, base, remote)) {
    const f = files.get(d.path);
    if (f) f.theirs = d.b;
    else files.set(d.path, { base: d.a, ours: d.a, theirs: d.b });
  }
  const theirsName = `${REMOTE}/${branch} ${remote.slice(0, 7)}`;
  /** @type {Parameters<SyncRun['merge']>[0]} */
  const params = { ours: 'local', theirs: theirsName, files: [], taken: await conflictCopies(g, files, [local, remote]) };
  /** @type {Map<string, Uint8Array | null>} */
  const ourBytes = new Map();
  for (const [path, f] of files) {
    const ours = await blob(g, f.ours);
    ourBytes.set(path, ours);
    params.files.push({ path, base: b64(await blob(g, f.base)), ours: b64(ours), theirs: b64(await blob(g, f.theirs)) });
  }
  const res = await merge(params);
  /** @type {string[]} */
  const names = [];
  /** @type {Staged[]} */
  const staged = [];
  const puts = [];
  for (const f of res.files) {
    const ours = ourBytes.has(f.path) ? /** @type {Uint8Array | null} */ (ourBytes.get(f.path)) : await blob(g, await oidAt(g, local, f.path));
    puts.push({ path: f.path, had: ours, want: f.content == null ? null : unb64(f.content) });
  }
  await untrackedInTheWay(g, storage, folder, puts);
  for (const [i, f] of res.files.entries()) {
    const { had: ours, want } = puts[i];
    await put(f.path, ours, want);
    if (!same(ours, want)) {
      // A dot-file a storage does not keep goes into the index by its blob.
      const oid = want && !folder && isDot(f.path) ? await git.writeBlob({ ...g, blob: want }) : undefined;
      staged.push({ path: f.path, present: want !== null, oid });
    }
    if (f.status !== 'ours') {
      const { content, ...rest } = f;
      (rep.files ??= []).push(/** @type {MergedFile} */ (rest));
    }
    if (f.status === 'conflict') rep.conflicts.push(f.path);
    if (f.status !== 'ours' && f.status !== 'theirs') names.push(`- ${f.status} ${f.path}`);
  }
  await stage(g, folder, staged);
  let msg = `arbor sync: merge ${REMOTE}/${branch} (${res.files.length} files, ${res.conflicts} in conflict)`;
  if (names.length > 0) msg += `\n\n${names.join('\n')}`;
  try {
    rep.merged = await git.commit({ ...g, ref: `refs/heads/${branch}`, message: `${msg}\n`, author: await signature(g), parent: [local, remote] });
  } catch (err) {
    throw failed('merge commit', err);
  }
}

/**
 * The files of the commits named as conflict copies (".conflict" in the
 * name), but for those given: the merge names a new copy after none of
 * them (its `taken`), so that a copy a person has not resolved stays.
 *
 * @param {Repo & { git: any }} g
 * @param {Map<string, unknown>} given
 * @param {string[]} commits
 */
async function conflictCopies(g, given, commits) {
  const out = new Set();
  for (const ref of commits) {
    for (const p of /** @type {string[]} */ (await g.git.listFiles({ ...g, ref }))) {
      if (p.slice(p.lastIndexOf('/') + 1).includes('.conflict') && !given.has(p)) out.add(p);
    }
  }
  return [...out].sort();
}

/**
 * The blob at `path` of a commit's tree, undefined when it has none.
 *
 * @param {Repo & { git: any }} g
 * @param {string} commit
 * @param {string} path
 * @returns {Promise<string | undefined>}
 */
async function oidAt(g, commit, path) {
  try {
    return (await g.git.readBlob({ ...g, oid: commit, filepath: path })).oid;
  } catch (err) {
    if (/** @type {{ code?: string }} */ (err)?.code === 'NotFoundError') return undefined;
    throw err;
  }
}

/**
 * A blob's bytes; null for none.
 *
 * @param {Repo & { git: any }} g
 * @param {string | undefined} oid
 * @returns {Promise<Uint8Array | null>}
 */
async function blob(g, oid) {
  if (!oid) return null;
  const { blob } = await g.git.readBlob({ ...g, oid });
  return new Uint8Array(blob);
}

/**
 * The files that differ between two commits (null: the empty tree), with
 * their blobs on each side; subtrees alike on both are not walked.
 *
 * @param {Repo & { git: any }} g
 * @param {string | null} a
 * @param {string | null} b
 * @returns {Promise<{ path: string, a?: string, b?: string }[]>}
 */
async function diffTrees(g, a, b) {
  const { git } = g;
  const empty = await git.writeTree({ ...g, tree: [] });
  /** @type {{ path: string, a?: string, b?: string }[]} */
  const out = [];
  await git.walk({
    ...g,
    trees: [git.TREE({ ref: a ?? empty }), git.TREE({ ref: b ?? empty })],
    map: async (/** @type {string} */ path, /** @type {any[]} */ [ea, eb]) => {
      if (path === '.') return true;
      const [ta, tb] = await Promise.all([ea?.type(), eb?.type()]);
      const [oa, ob] = await Promise.all([ea?.oid(), eb?.oid()]);
      if (oa === ob && ta === tb) return null; // alike, with everything below
      if (ta === 'tree' && tb === 'tree') return true;
      const fa = ta === 'blob' ? oa : undefined;
      const fb = tb === 'blob' ? ob : undefined;
      if (fa !== fb) out.push({ path, a: fa, b: fb });
      return ta === 'tree' || tb === 'tree' ? true : null;
    },
  });
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/**
 * Whether a path is a dot-file or lies in a dot-folder: git's, outside the
 * tree a storage keeps.
 *
 * @param {string} p
 */
const isDot = (p) => p.split('/').some((s) => s.startsWith('.'));

/**
 * The root's file at p as it is now, null when there is none. Dot-files
 * are read from the folder; a storage keeps none.
 *
 * @param {Repo & { git: any }} g
 * @param {Storage} storage
 * @param {boolean} folder
 * @param {string} p
 * @returns {Promise<Uint8Array | null>}
 */
async function current(g, storage, folder, p) {
  try {
    if (!isDot(p)) return storage.read(p);
    return folder ? new Uint8Array(await g.fs.promises.readFile(`${g.dir}/${p}`)) : null;
  } catch (err) {
    if (/** @type {{ code?: string }} */ (err)?.code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Makes the root's file at p hold `want` (null: no file), where it held
 * `had` as last committed. Every change is a compare-and-swap on `had`: a
 * file edited since the sync committed fails it (ECHANGED) instead of
 * being overwritten or removed; the next sync commits and merges the edit.
 * Files of the tree are written through the storage (its swap checks just
 * before the rename); a removal and a dot-file compare first. Dot-files
 * are git's: written to the folder directly, or, in a storage, kept in git
 * only.
 *
 * @param {Repo & { git: any }} g
 * @param {Storage} storage
 * @param {boolean} folder
 * @param {string} p
 * @param {Uint8Array | null} had
 * @param {Uint8Array | null} want
 * @param {Set<string>} changed
 */
async function putFile(g, storage, folder, p, had, want, changed) {
  if (same(had, want)) return;
  try {
    if (isDot(p) && !folder) {
      changed.add(p);
      return;
    }
    if (want === null || isDot(p) || typeof storage.swap !== 'function') {
      // A storage without swap is written only by this thread (memory, an
      // IndexedDB mirror): compare, then write.
      const now = await current(g, storage, folder, p);
      if (!(now === null && (had === null || want === null)) && !(now !== null && had !== null && sameBytes(now, had))) {
        throw new StorageError('ECHANGED', `${p} changed since the sync committed: left as it is, for the next sync to commit and merge`);
      }
    }
    changed.add(p);
    if (isDot(p)) {
      const full = `${g.dir}/${p}`;
      if (want === null) await g.fs.promises.rm(full, { force: true });
      else {
        // The prefix of every host's temporary files, which `arbor doctor --fix` clears.
        const folderOf = full.slice(0, full.lastIndexOf('/'));
        const tmp = `${folderOf}/.arbor-tmp-${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
        await g.fs.promises.mkdir(folderOf, { recursive: true });
        try {
          await g.fs.promises.writeFile(tmp, want);
          await g.fs.promises.rename(tmp, full);
        } catch (err) {
          await g.fs.promises.rm(tmp, { force: true });
          throw err;
        }
      }
      return;
    }
    if (want === null) {
      try {
        storage.remove(p);
      } catch (err) {
        if (/** @type {{ code?: string }} */ (err)?.code !== 'ENOENT') throw err;
      }
      // git keeps no folders: one a deletion empties goes too.
      for (let dir = p.slice(0, Math.max(0, p.lastIndexOf('/'))); dir !== ''; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/')))) {
        try {
          if (storage.list(dir).length > 0) break;
          storage.remove(dir);
        } catch {
          break;
        }
      }
      return;
    }
    if (typeof storage.swap === 'function') storage.swap(p, want, had ?? ZERO, had !== null);
    else storage.write(p, want);
  } catch (err) {
    throw failed(`write ${p}`, err);
  }
}

/**
 * Refuses, before anything is written, to bring in files the local branch
 * lacks where the root has one: files git ignores here (.git/info/exclude)
 * that the other side tracks. As git does, the person moves them aside;
 * nothing is overwritten.
 *
 * @param {Repo & { git: any }} g
 * @param {Storage} storage
 * @param {boolean} folder
 * @param {{ path: string, had: Uint8Array | null, want: Uint8Array | null }[]} puts
 */
async function untrackedInTheWay(g, storage, folder, puts) {
  const inTheWay = [];
  for (const { path, had, want } of puts) {
    if (had === null && want !== null && (await current(g, storage, folder, path)) !== null) inTheWay.push(path);
  }
  if (inTheWay.length > 0) {
    throw new ArborError('sync', `sync: the remote has files that git ignores here and that the root holds; move them aside and sync again (nothing was changed): ${inTheWay.join(', ')}`);
  }
}

/** @typedef {{ path: string, present: boolean, oid?: string | null }} Staged a path as the sync left it; `oid`: its blob, when known */

/**
 * Puts the root's files in git's index as the sync left them: removed,
 * added from the work tree (all in one write of the index: one write per
 * file costs the square of their number on a first sync), or, for a
 * dot-file a storage does not keep, by its blob.
 *
 * @param {Repo & { git: any }} g
 * @param {boolean} folder
 * @param {Staged[]} files
 */
async function stage(g, folder, files) {
  const { git } = g;
  /** @type {string[]} */
  const added = [];
  let at = '';
  try {
    for (const f of files) {
      at = f.path;
      if (!f.present) await git.remove({ ...g, filepath: f.path });
      else if (!folder && isDot(f.path)) await git.updateIndex({ ...g, filepath: f.path, oid: f.oid, add: true });
      else added.push(f.path);
    }
    at = added.join(', ');
    if (added.length > 0) await git.add({ ...g, filepath: added, force: true });
  } catch (err) {
    throw failed(`stage ${at}`, err);
  }
}

/**
 * @param {Uint8Array | null} a
 * @param {Uint8Array | null} b
 */
function same(a, b) {
  return a === null || b === null ? a === b : sameBytes(a, b);
}

/**
 * Counts the commits reachable from a and not from b.
 *
 * @param {Repo & { git: any }} g
 * @param {string | null} a
 * @param {string | null} b
 */
async function countNotIn(g, a, b) {
  if (!a) return 0;
  const seen = new Set();
  if (b) for (const c of await g.git.log({ ...g, ref: b })) seen.add(c.oid);
  let n = 0;
  for (const c of await g.git.log({ ...g, ref: a })) if (!seen.has(c.oid)) n++;
  return n;
}

/**
 * @typedef {{ lastSync?: string, head?: string, auditBytes?: number }} SyncState
 * @typedef {{ op: string, path: string, reason?: string, status?: string }} AuditOp
 */

/**
 * The record of the last sync (.arbor/sync.json, as the Go host writes it).
 *
 * @param {Storage} storage
 * @returns {SyncState}
 */
function readState(storage) {
  try {
    return JSON.parse(decoder.decode(storage.read(STATE_FILE)));
  } catch {
    return {};
  }
}

/**
 * @param {Storage} storage
 * @param {SyncState} s
 */
function writeState(storage, s) {
  try {
    storage.write(STATE_FILE, encoder.encode(`${JSON.stringify(s)}\n`));
  } catch (err) {
    throw failed('record the sync', err);
  }
}

/**
 * The operations applied since the last sync: the audit log's lines after
 * the size it had then (first the rest of the log it was rotated to, when
 * it was rotated since), and the log's size now.
 *
 * @param {Storage} storage
 * @param {SyncState} last
 * @returns {{ ops: AuditOp[], size: number }}
 */
function auditSince(storage, last) {
  /** @param {string} p */
  const readOr = (p) => {
    try {
      return storage.read(p);
    } catch {
      return ZERO;
    }
  };
  const data = readOr(AUDIT_FILE);
  const from = last.auditBytes ?? 0;
  let text;
  if (data.length >= from) text = decoder.decode(data.subarray(from));
  else {
    /** @type {string[]} */
    let old = [];
    try {
      old = storage
        .list(STATE_DIR)
        .map((e) => e.name)
        .filter((n) => /^audit\..+\.jsonl$/.test(n))
        .sort();
    } catch {
      // no state folder
    }
    text = '';
    if (old.length > 0) {
      const prev = readOr(`${STATE_DIR}/${old[old.length - 1]}`);
      if (prev.length >= from) text = decoder.decode(prev.subarray(from));
    }
    text += decoder.decode(data);
  }
  /** @type {AuditOp[]} */
  const ops = [];
  for (const line of text.split('\n')) {
    try {
      const o = JSON.parse(line);
      if (o?.status === 'success') ops.push(o);
    } catch {
      // a torn or blank line
    }
  }
  return { ops, size: data.length };
}

/**
 * The audit log's size now: where the next sync's message starts.
 *
 * @param {Storage} storage
 */
function auditSize(storage) {
  try {
    return storage.stat(AUDIT_FILE).size;
  } catch {
    return 0;
  }
}

/**
 * The message of a commit of the root's changes: the audited operations by
 * type, then each (the first 30), or, when people edited the files, which.
 *
 * @param {AuditOp[]} ops
 * @param {string[]} changed
 */
function commitMessage(ops, changed) {
  if (ops.length === 0) {
    const listed = changed.length > MAX_LISTED ? [...changed.slice(0, MAX_LISTED), `… and ${changed.length - MAX_LISTED} more`] : changed;
    return `arbor sync: ${changed.length} files changed outside Arbor\n\n- ${listed.join('\n- ')}\n`;
  }
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const o of ops) counts.set(o.op, (counts.get(o.op) ?? 0) + 1);
  let msg = `arbor sync: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}\n\n`;
  for (const [i, o] of ops.entries()) {
    if (i === MAX_LISTED) {
      msg += `- … and ${ops.length - MAX_LISTED} more\n`;
      break;
    }
    msg += `- ${o.op} ${o.path}: ${(o.reason ?? '').split(/\s+/).filter(Boolean).join(' ')}\n`;
  }
  return msg;
}

/**
 * A URL with its password hidden, for reports and messages.
 *
 * @param {string} u
 */
function redact(u) {
  try {
    const p = new URL(u);
    if (p.password) {
      p.password = 'xxxxx';
      return p.toString();
    }
  } catch {
    // not a URL
  }
  return u.trim();
}

/**
 * How the root stands against its remote: fetch first unless
 * `fetch: false`, else as of the last fetch.
 *
 * @param {any} git
 * @param {any} http
 * @param {any} fs
 * @param {SyncRun} run
 * @param {import('../index.d.ts').SyncStatusOptions} [options]
 * @returns {Promise<SyncStatus>}
 */
async function status(git, http, fs, run, options = {}) {
  const { storage } = run;
  const repo = locate(storage, fs);
  const g = { ...repo, git };
  const branch = await openRepo(g, options.branch, false);
  /** @type {SyncStatus} */
  const st = { branch, ahead: 0, behind: 0, fetched: false, unsynced: [], operations: 0 };
  const origin = (/** @type {{ remote: string, url: string }[]} */ (await git.listRemotes({ ...g }))).find((r) => r.remote === REMOTE);
  if (origin) st.remote = redact(origin.url);
  if (options.fetch !== false && origin) {
    await fetchBranch(g, http, origin.url, branch, transport(options));
    st.fetched = true;
  }
  st.unsynced = (await changedRows(g, storage, repo.folder)).map(([p]) => p).sort();
  const last = readState(storage);
  if (last.lastSync) st.lastSync = last.lastSync;
  st.operations = auditSince(storage, last).ops.length;
  const local = await localHead(g, branch);
  const remote = await remoteHead(g, branch);
  st.ahead = await countNotIn(g, local, remote);
  st.behind = await countNotIn(g, remote, local);
  return st;
}

/**
 * Bytes in base64, as the engine takes them (null stays null: no file).
 *
 * @param {Uint8Array | null} bytes
 */
function b64(bytes) {
  if (bytes === null) return null;
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 0x8000)));
  return btoa(s);
}

/** @param {string} s */
function unb64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * An fs, as isomorphic-git takes one (its promise API), over a memory's
 * storage: paths are absolute ("/ops/x.md" is the storage's "ops/x.md").
 * A storage has no empty folders (an IndexedDB one keeps files only), so
 * the folders git makes before it writes into them are remembered here.
 *
 * @param {Storage} storage
 */
function storageFs(storage) {
  /** @type {Set<string>} */
  const made = new Set();
  /** @param {string} p */
  const rel = (p) =>
    p
      .split('/')
      .filter((s) => s !== '' && s !== '.')
      .join('/');
  /**
   * @param {string} code
   * @param {string} message
   */
  const fail = (code, message) => Object.assign(new Error(message), { code });
  /** @param {string} p */
  const entry = (p) => {
    // A path the storage cannot hold (a dot-file: git asks for .gitignore
    // files and .git/info/exclude) is a file it does not have.
    if (pathProblem(rel(p))) throw fail('ENOENT', `${p}: no such file in the storage`);
    try {
      return storage.stat(rel(p));
    } catch (err) {
      if (/** @type {{ code?: string }} */ (err)?.code === 'ENOENT' && made.has(rel(p))) return { name: '', dir: true, size: 0, mtime: 0 };
      throw err;
    }
  };
  /** @param {import('../storage/types.d.ts').StorageEntry} e */
  const stats = (e) => {
    const ms = e.mtime;
    // git's index trusts a file unread by these, as the catalog does: a
    // storage's change time and inode, where it has them, tell it of bytes
    // written under a restored time.
    const cms = e.ctime || ms;
    return {
      type: e.dir ? 'dir' : 'file',
      mode: e.dir ? 0o40000 : 0o100644,
      size: e.size,
      ino: e.ino ?? 0,
      uid: 0,
      gid: 0,
      dev: 0,
      mtimeMs: ms,
      ctimeMs: cms,
      mtime: new Date(ms),
      ctime: new Date(cms),
      isFile: () => !e.dir,
      isDirectory: () => e.dir,
      isSymbolicLink: () => false,
    };
  };
  const promises = {
    /**
     * @param {string} p
     * @param {{ encoding?: string } | string} [opts]
     */
    async readFile(p, opts) {
      if (typeof p !== 'string') throw fail('EINVAL', 'readFile: no path');
      if (entry(p).dir) throw fail('EISDIR', `${p} is a folder`);
      const bytes = storage.read(rel(p));
      const enc = typeof opts === 'string' ? opts : opts?.encoding;
      return enc === 'utf8' || enc === 'utf-8' ? decoder.decode(bytes) : bytes;
    },
    /**
     * @param {string} p
     * @param {Uint8Array | string} data
     */
    async writeFile(p, data) {
      storage.write(rel(p), typeof data === 'string' ? encoder.encode(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    },
    /** @param {string} p */
    async mkdir(p) {
      let e = null;
      try {
        e = entry(p);
      } catch {
        // absent: made below
      }
      if (e) throw fail('EEXIST', `${p} exists`);
      made.add(rel(p));
    },
    /** @param {string} p */
    async rmdir(p) {
      made.delete(rel(p));
      try {
        storage.remove(rel(p));
      } catch (err) {
        if (/** @type {{ code?: string }} */ (err)?.code !== 'ENOENT') throw err;
      }
    },
    /** @param {string} p */
    async unlink(p) {
      storage.remove(rel(p));
    },
    /** @param {string} p */
    async stat(p) {
      return stats(entry(p));
    },
    /** @param {string} p */
    async lstat(p) {
      return stats(entry(p));
    },
    /** @param {string} p */
    async readdir(p) {
      const e = entry(p);
      if (!e.dir) throw fail('ENOTDIR', `${p} is not a folder`);
      try {
        return storage.list(rel(p)).map((x) => x.name);
      } catch (err) {
        if (/** @type {{ code?: string }} */ (err)?.code === 'ENOENT') return [];
        throw err;
      }
    },
    async readlink() {
      throw fail('ENOTSUP', 'a memory storage has no symbolic links');
    },
    async symlink() {
      throw fail('ENOTSUP', 'a memory storage has no symbolic links');
    },
  };
  return { promises };
}
