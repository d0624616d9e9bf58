// A memory root in a folder of the local file system, for Node. Every call
// is synchronous because the module calls its host imports synchronously.
//
// Confinement: a path must pass the ABI rules (paths.js), and once joined
// to the root its deepest existing ancestor, resolved through symbolic
// links, must still lie inside the root — so a link pointing out of the
// folder is refused with EACCES instead of followed. (A link swapped in
// between the check and the use can still race it; the root's owner is
// trusted not to do that.) A link inside the root is not followed either
// in the tree (.arbor/ aside): listings leave it out, and a read, listing
// or stat through it is refused, so that what it leads to is read once,
// under its own name.

import fs from 'node:fs';
import path from 'node:path';
import { StorageError } from './errors.js';
import { pathProblem, compareNames } from '../paths.js';
import { lockSync } from './rootlock.js';

/** @typedef {import('./errors.d.ts').StorageErrorCode} StorageErrorCode */

/** Windows: no change time or inode in listings (see entry). */
const windows = process.platform === 'win32';

/**
 * node:fs error codes → the codes of the storage interface (anything else is EIO).
 * @type {Record<string, StorageErrorCode>}
 */
const codes = {
  ENOENT: 'ENOENT',
  ENOTDIR: 'EINVAL',
  EISDIR: 'EINVAL',
  ENOTEMPTY: 'EINVAL',
  EEXIST: 'EINVAL',
  EINVAL: 'EINVAL',
  ENAMETOOLONG: 'ENAMETOOLONG',
  EXDEV: 'EXDEV', // a rename across a mount inside the root: the engine copies instead
  ENXIO: 'EINVAL', // a socket opened as a file
  EACCES: 'EACCES',
  EPERM: 'EACCES',
  EROFS: 'EACCES',
  ENOSPC: 'ENOSPC',
  EDQUOT: 'ENOSPC',
};

/**
 * @param {unknown} err what node:fs threw
 * @param {string} what
 * @returns {StorageError}
 */
function wrap(err, what) {
  if (err instanceof StorageError) return err;
  // Cast: only the code and the message of a system error are read.
  const e = /** @type {NodeJS.ErrnoException | null | undefined} */ (err);
  const code = codes[/** @type {string} */ (e?.code)] ?? 'EIO'; // no code: key "undefined", not mapped
  return new StorageError(code, `${what}: ${e?.message ?? e}`, { cause: err });
}

let tempCounter = 0;

/**
 * The statfs types of file systems whose changes made elsewhere (another
 * machine, the Windows side of WSL) raise no watch event here: NFS, SMB,
 * CIFS, SMB2, FUSE (sshfs, rclone, cloud drives), 9P, Coda, AFS, Ceph,
 * GFS2, OCFS2, Lustre (the Go host's list, host/watch/remote_linux.go).
 */
const networkTypes = new Set([0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, 0x73757245, 0x5346414f, 0x00c36400, 0x01161970, 0x7461636f, 0x0bd00bd0]);

/** How often a network folder's memory scans it, besides watching it: the Go host's default. */
const networkScanMs = 2000;

/**
 * How many events the kernel queues for one inotify instance before it
 * drops the rest (Linux's fs.inotify.max_queued_events), or Infinity where
 * none is known. libuv reads every fs.watch's events from one instance per
 * process and drops the kernel's notice of an overflow: a turn of the
 * event loop that brings this many events may have lost others.
 * @returns {number}
 */
function eventQueueLimit() {
  if (process.platform !== 'linux') return Infinity;
  try {
    return Number.parseInt(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10) || Infinity;
  } catch {
    return Infinity;
  }
}

/**
 * The events every folder memory of the process heard in this turn of the
 * event loop, and what each watching one does when they reach the
 * kernel's queue (eventQueueLimit): events were perhaps lost.
 */
const turn = { heard: 0, limit: Infinity, /** @type {Set<() => void>} */ onOverflow: new Set() };

/** Counts one event heard; at the queue's limit, tells every watching memory. */
function heardEvent() {
  if (turn.heard++ === 0) setImmediate(() => (turn.heard = 0));
  if (turn.heard === turn.limit) for (const f of turn.onOverflow) f();
}

/**
 * Whether the folder is on a network file system (Linux only: statfs's
 * type means nothing elsewhere).
 * @param {string} dir
 * @returns {boolean}
 */
function onNetwork(dir) {
  if (process.platform !== 'linux') return false;
  try {
    return networkTypes.has(fs.statfsSync(dir).type >>> 0);
  } catch {
    return false;
  }
}

/**
 * Creates a storage adapter over the folder `dir` (created if missing).
 *
 * @type {typeof import('./node.d.ts').nodeFs}
 */
export function nodeFs(dir, { network } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const root = fs.realpathSync.native(path.resolve(dir));
  const remote = network ?? onNetwork(root);

  /** @param {string} real */
  const inside = (real) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

  /**
   * The absolute location of p when it passes the path rules; its links
   * are not resolved (resolve checks them).
   * @param {string} p
   * @returns {string}
   */
  const located = (p) => {
    if (typeof p !== 'string') throw new StorageError('EINVAL', 'path is not a string');
    // Anything that would land outside the root is a denial, whatever else
    // is wrong with it; then the ordinary path rules apply.
    if (path.isAbsolute(p) || p.split(/[\\/]/).includes('..')) {
      throw new StorageError('EACCES', `path ${JSON.stringify(p)} leaves the root`);
    }
    const problem = pathProblem(p);
    if (problem) throw new StorageError('EINVAL', `path ${JSON.stringify(p)}: ${problem}`);
    return p === '' ? root : path.join(root, ...p.split('/'));
  };

  /**
   * Whether p is a path of the tree, not of the engine's own state (.arbor/).
   * @param {string} p
   */
  const inTree = (p) => p !== '.arbor' && !p.startsWith('.arbor/');

  /**
   * The first segment of p that is a symbolic link leading inside the root,
   * and p with that link replaced by the path it leads to; null when none
   * is (resolve refuses a link leading out, or nowhere). The tree is read
   * without following such links: a folder or file under two names was
   * found twice, and a watcher, which hears an edit under the real name
   * only, left the other name's text stale (the Go host's rule too).
   * @param {string} p
   * @returns {{link: string, real: string} | null}
   */
  const linkInside = (p) => {
    const segs = p.split('/');
    let cur = root;
    for (let i = 0; i < segs.length; i++) {
      cur = path.join(cur, segs[i]);
      const st = fs.lstatSync(cur, { throwIfNoEntry: false });
      if (!st) return null;
      if (!st.isSymbolicLink()) continue;
      let to;
      try {
        to = fs.realpathSync.native(cur);
      } catch {
        return null;
      }
      if (!inside(to)) return null;
      const rel = path.relative(root, to).split(path.sep).filter(Boolean);
      return { link: segs.slice(0, i + 1).join('/'), real: [...rel, ...segs.slice(i + 1)].join('/') };
    }
    return null;
  };

  /**
   * The absolute location of p, checked against the rules and the root.
   * @param {string} p
   * @returns {string}
   */
  const resolve = (p) => resolvePath(p, false);

  /**
   * resolve for a read, a listing or a stat, which never passes through a
   * symbolic link of the tree (linkInside).
   * @param {string} p
   * @returns {string}
   */
  const resolveRead = (p) => resolvePath(p, true);

  /**
   * @param {string} p
   * @param {boolean} read
   * @returns {string}
   */
  const resolvePath = (p, read) => {
    const full = located(p);
    // Resolve the deepest part that exists; what does not exist yet cannot
    // be a link.
    let probe = full;
    for (;;) {
      let real;
      try {
        real = fs.realpathSync.native(probe);
      } catch (err) {
        const code = /** @type {NodeJS.ErrnoException} */ (err).code; // cast: realpath fails with a system error
        if (code === 'ENOENT' || code === 'ENOTDIR') {
          const up = path.dirname(probe);
          if (up === probe) throw wrap(err, p);
          probe = up;
          continue;
        }
        throw wrap(err, p);
      }
      if (!inside(real)) throw new StorageError('EACCES', `path ${JSON.stringify(p)} leads outside the root`);
      // A path whose existing part resolves to itself passes through no link.
      const found = read && real !== probe && inTree(p) ? linkInside(p) : null;
      if (found) {
        throw new StorageError(
          'EACCES',
          `${p}: ${found.link} is a symbolic link, which the engine does not follow: what it leads to is read under its own name, ${JSON.stringify(found.real)}`,
        );
      }
      return full;
    }
  };

  /**
   * The folders listings found, by path, with their identity (`dev:ino`),
   * until each is listed: a walk lists every folder of the tree right
   * after its parent, and resolving the path of each (realpath, which
   * looks up every component of it) was a sixth of an open of 100,000
   * entries. Listing one of them checks instead, with one lstat, that its
   * path still leads to that folder: then it is a folder seen inside the
   * root by its parent's listing, itself checked the one way or the other,
   * so a link put in the place of a folder above it since can lead nowhere
   * else (only to the folder the listing saw, moved).
   * @type {Map<string, string>}
   */
  const listedFolders = new Map();

  /**
   * The location of the folder p when a listing found it (listedFolders)
   * and its path still leads to it; else null, and p is resolved as any
   * other path is.
   * @param {string} p
   * @returns {string | null}
   */
  const listedFolder = (p) => {
    const id = listedFolders.get(p);
    if (id === undefined) return null;
    listedFolders.delete(p);
    const full = located(p);
    const st = fs.lstatSync(full, { bigint: true, throwIfNoEntry: false });
    return st?.isDirectory() && `${st.dev}:${st.ino}` === id ? full : null;
  };

  /**
   * resolve for a write: a path passing through a symbolic link is refused.
   * A link to a folder inside the root shows that folder's files under a
   * second name; removing or writing one through the link would change
   * the files at the first name, which a DELETE of the link's folder, or a
   * MERGE of the two names of one entry, must never do (the Go host's
   * rule too).
   * @param {string} p
   * @returns {string}
   */
  const resolveWrite = (p) => {
    if (noSpace) throw new StorageError('ENOSPC', `write ${p}: refused, the root's lock could not be written: no space left on the disk`);
    const full = resolve(p);
    const segs = p.split('/');
    let cur = root;
    for (let i = 0; i < segs.length - 1; i++) {
      cur = path.join(cur, segs[i]);
      const st = fs.lstatSync(cur, { throwIfNoEntry: false });
      if (!st) break;
      if (st.isSymbolicLink()) {
        throw new StorageError('EACCES', `${p}: ${segs.slice(0, i + 1).join('/')} is a symbolic link, and writes never pass through one`);
      }
    }
    return full;
  };

  // The files readAt read, kept open (least recently used first): the engine
  // reads its index's segments a block at a time, and checking, opening
  // and closing the file for each block was most of what a query paid.
  /** @type {Map<string, {fd: number, st: fs.Stats}>} */
  const open = new Map();
  const maxOpen = 64;
  /** @param {string} full */
  const forget = (full) => {
    const kept = open.get(full);
    open.delete(full);
    if (kept) fs.closeSync(kept.fd);
  };
  /** @param {string} full */
  const statOrNull = (full) => {
    try {
      return fs.statSync(full);
    } catch {
      return null;
    }
  };
  /**
   * The times are read in nanoseconds and truncated, as the Go hosts do:
   * mtimeMs, a double, rounds a time just short of the next millisecond up
   * to it, and the catalog would find the file changed whenever the other
   * kind of host had looked last. The change time and inode are what no
   * tool sets back (cp -p and tar x set the modification time); left out
   * on Windows, where the Go host cannot read them, or a tree opened by
   * both would be read whole by each after the other.
   *
   * @param {string} name
   * @param {fs.BigIntStats} st
   * @returns {import('./types.d.ts').StorageEntry}
   */
  const entry = (name, st) => {
    const mtime = Number(st.mtimeNs / 1_000_000n);
    const stamp = windows ? { mtime } : { mtime, ctime: Number(st.ctimeNs / 1_000_000n), ino: Number(st.ino) };
    return st.isDirectory()
      ? // The folder's identity keeps a walk from going round a link back up the tree.
        { name, dir: true, size: 0, ...stamp, id: `${st.dev}:${st.ino}` }
      : { name, dir: false, size: Number(st.size), ...stamp };
  };

  /**
   * Best effort: makes a rename durable. Not every platform can fsync a folder.
   * @param {string} d
   */
  const syncDir = (d) => {
    let fd;
    try {
      fd = fs.openSync(d, 'r');
      fs.fsyncSync(fd);
    } catch {
      // ignored: durability of the folder entry is a bonus, not a contract
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  };

  /**
   * Removes the folders a failed write made, from dir up to made (the
   * outermost, as fs.mkdirSync reports it; undefined: none): a full disk
   * fails the file after its folders were made, and a failed write changes
   * nothing. One that holds something by now stays, and those above it.
   *
   * @param {string} dir
   * @param {string | undefined} made
   */
  const unmake = (dir, made) => {
    if (made === undefined) return;
    for (let d = dir; ; d = path.dirname(d)) {
      try {
        fs.rmdirSync(d);
      } catch {
        return;
      }
      if (d === made || path.dirname(d) === d) return;
    }
  };

  /**
   * Replaces the file at p atomically: a temporary dot-file in the same
   * folder, fsync, then a rename, after check (when given) has seen the
   * target as it is just before.
   *
   * @param {string} p
   * @param {Uint8Array} bytes
   * @param {((full: string) => void) | null} check
   */
  const writeAtomic = (p, bytes, check) => {
    const full = resolveWrite(p);
    if (p === '') throw new StorageError('EINVAL', 'cannot write the root');
    const parent = path.dirname(full);
    // A dot-name, so the engine's tree walk never picks it up, with the
    // prefix every host uses, so `arbor doctor --fix` finds one a crash
    // left behind. Not the target's name: beside a name near the file
    // system's 255 bytes it would be too long, and the file unwritable.
    // The random part tells apart the writers of one process (workers).
    const temp = path.join(parent, `.arbor-tmp-${process.pid}-${++tempCounter}-${Math.random().toString(36).slice(2, 10)}`);
    let fd;
    /** @type {string | undefined} the outermost folder this write made */
    let made;
    try {
      // A link at p is refused, never replaced (the Go host's rule): the
      // rename would turn one of two names of a file into a copy of its own.
      if (fs.lstatSync(full, { throwIfNoEntry: false })?.isSymbolicLink()) {
        throw new StorageError('EACCES', `write ${p}: is a symbolic link`);
      }
      made = fs.mkdirSync(parent, { recursive: true });
      fd = fs.openSync(temp, 'wx', 0o644);
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fd = undefined;
      check?.(full);
      fs.renameSync(temp, full);
    } catch (err) {
      try {
        if (fd !== undefined) fs.closeSync(fd);
        fs.rmSync(temp, { force: true });
        unmake(parent, made);
      } catch {
        // the first error is the one to report
      }
      throw wrap(err, `write ${p}`);
    }
    syncDir(parent);
  };

  /** @type {(() => void) | null} releases the root's lock while this storage holds it */
  let release = null;
  /**
   * Set while a call runs whose lock file could not be written for want of
   * space: the call is served for reading, every write refused (ENOSPC).
   */
  let noSpace = false;

  return {
    root,

    read(p) {
      const full = resolveRead(p);
      let fd;
      try {
        // Not blocking, and only a file: a FIFO named x.md waited for a
        // writer at its open, and the memory's open with it, for good.
        fd = fs.openSync(full, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
        if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error(`${full} is not a file`), { code: 'EISDIR' });
        return fs.readFileSync(fd);
      } catch (err) {
        throw wrap(err, `read ${p}`);
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    },

    readAt(p, into, offset) {
      const full = located(p);
      let kept = open.get(full);
      if (kept) {
        // Used while the path still names the file it holds.
        const st = statOrNull(full);
        if (!st || st.ino !== kept.st.ino || st.dev !== kept.st.dev || st.size !== kept.st.size || st.mtimeMs !== kept.st.mtimeMs) {
          forget(full);
          kept = undefined;
        } else {
          open.delete(full); // most recently used last
          open.set(full, kept);
        }
      }
      try {
        if (!kept) {
          const checked = resolveRead(p);
          // Stat first: opening a FIFO or a device could block.
          if (!fs.statSync(checked).isFile()) throw Object.assign(new Error(`${checked} is not a file`), { code: 'EISDIR' });
          const fd = fs.openSync(checked, 'r');
          kept = { fd, st: fs.fstatSync(fd) };
          if (open.size >= maxOpen) forget(/** @type {string} */ (open.keys().next().value));
          open.set(checked, kept);
        }
        return fs.readSync(kept.fd, into, 0, into.length, offset);
      } catch (err) {
        throw wrap(err, `read ${p}`);
      }
    },

    write(p, bytes) {
      writeAtomic(p, bytes, null);
    },

    // write, when the file still holds `old` (or is absent): checked once
    // the new bytes are synced, just before the rename, so that an
    // editor's save meanwhile fails it (ECHANGED) instead of being lost.
    swap(p, bytes, old, existed) {
      writeAtomic(p, bytes, (full) => {
        let now = null;
        try {
          now = fs.readFileSync(full);
        } catch (err) {
          if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err;
        }
        if ((now !== null) !== existed || (now !== null && !now.equals(old))) {
          throw new StorageError('ECHANGED', `write ${p}: changed on disk`);
        }
      });
    },
    // Reports the files others change (an editor, git, another process),
    // so that a memory reads them again before its next call: a watcher
    // per folder (dot-folders left out), unref'd, so none keeps a process
    // alive. A folder's watcher hears the files in it change, appear and
    // go. Not Node's recursive fs.watch: on Linux it watches every file
    // besides every folder, and stats each one first: opening a tree of
    // 100,000 entries cost 7 to 8 s more CPU and 245 MiB more, and a tree
    // past the system's limit of watches (often 8,192 to 200,000) could
    // not be watched at all. Not chokidar either: it too watches every
    // file it finds (its _handleFile), and would be the package's first
    // runtime dependency. The Go host watches the same way (fsnotify, a
    // watch per folder: host/watch). A folder that appears is reported (the
    // engine lists it with everything below it) and watched afresh, even
    // where one of its path was (removed and made again, as a checkout
    // does); one that goes is dropped. An error of a watcher may have lost
    // changes: the listener hears null (scan). On a network file system
    // what other machines change raises no event here: the listener also
    // hears null every networkScanMs; so it does once a folder cannot be
    // watched (past the system's limit of watches), as nothing would tell
    // of a change in it. A burst of events as many as the kernel queues
    // may have lost some (an overflow, which Node does not report): the
    // listener hears null, and the folders made meanwhile are watched.
    changes(listener, warn = () => {}) {
      /** @type {Map<string, fs.FSWatcher>} by folder, relative to the root ('' for the root) */
      const watchers = new Map();
      let closed = false;
      let unwatchableSaid = false;
      /** @type {ReturnType<typeof setInterval> | null} */
      let scans = null;
      /** Has the listener hear null every networkScanMs from now on: some change may raise no event. */
      const scanEvery = () => {
        if (scans || closed) return;
        scans = setInterval(() => listener(null), networkScanMs);
        scans.unref();
      };
      /** @param {string} full @returns {string[]} the names of the folders in full, dot-folders left out */
      const subfolders = (full) => {
        try {
          return fs
            .readdirSync(full, { withFileTypes: true })
            .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
            .map((d) => d.name);
        } catch {
          return []; // gone or unreadable: reported by its parent's watcher, or never listable
        }
      };
      /** @param {string} rel @returns {string} */
      const located = (rel) => (rel === '' ? root : path.join(root, ...rel.split('/')));
      /** @param {string} rel watches every folder at and below rel that is not watched */
      const watchMissing = (rel) => {
        if (closed) return;
        if (!watchers.has(rel)) return watch(rel);
        for (const name of subfolders(located(rel))) watchMissing(rel === '' ? name : `${rel}/${name}`);
      };
      const overflowed = () => {
        listener(null);
        try {
          watchMissing('');
        } catch {
          scanEvery(); // the root itself, unwatched after an error, could not be watched again
        }
      };
      /** @param {string} rel */
      const unwatch = (rel) => {
        for (const [dir, w] of watchers) {
          if (rel === '' || dir === rel || dir.startsWith(`${rel}/`)) {
            w.close();
            watchers.delete(dir);
          }
        }
      };
      /** @param {string} rel a folder, relative to the root */
      const watch = (rel) => {
        if (closed || watchers.has(rel)) return;
        const full = located(rel);
        let watcher;
        try {
          watcher = fs.watch(full, { persistent: false }, (event, filename) => {
            heardEvent();
            if (filename == null) return listener(null);
            const name = String(filename);
            if (name.startsWith('.')) return;
            const child = rel === '' ? name : `${rel}/${name}`;
            if (event === 'rename') {
              let st;
              try {
                st = fs.lstatSync(path.join(full, name), { throwIfNoEntry: false });
              } catch {
                st = undefined;
              }
              // A folder that came, or came back: a watcher of the folder
              // that went watches what is gone, never this one.
              unwatch(child);
              if (st?.isDirectory()) watch(child);
            }
            listener([child]);
          });
        } catch (err) {
          if (rel === '') throw err;
          // Gone since it was listed: its parent's watcher reports it.
          if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return;
          // Past the limit of watches (ENOSPC), or another refusal: it was
          // thrown from a watcher's callback, and ended the process.
          if (!unwatchableSaid) {
            unwatchableSaid = true;
            const code = /** @type {NodeJS.ErrnoException} */ (err).code;
            const limit = code === 'ENOSPC' ? "the system's limit of watches, fs.inotify.max_user_watches on Linux" : String(code ?? err);
            warn(`a folder of the root could not be watched (${limit}): the tree is also scanned for changes, every ${networkScanMs / 1000} s`);
          }
          return scanEvery();
        }
        watcher.on('error', () => {
          unwatch(rel);
          listener(null);
          // Still there, the folder is heard by no watcher any more.
          if (fs.statSync(full, { throwIfNoEntry: false })?.isDirectory()) scanEvery();
        });
        watchers.set(rel, watcher);
        for (const name of subfolders(full)) watch(rel === '' ? name : `${rel}/${name}`);
      };
      try {
        watch('');
      } catch (err) {
        closed = true;
        unwatch('');
        if (scans) clearInterval(scans);
        throw err;
      }
      if (remote) scanEvery();
      turn.limit = eventQueueLimit(); // read at each start: an administrator (or a test) may change it
      turn.onOverflow.add(overflowed);
      return () => {
        closed = true;
        turn.onOverflow.delete(overflowed);
        if (scans) clearInterval(scans);
        for (const w of watchers.values()) w.close();
        watchers.clear();
      };
    },

    append(p, bytes) {
      const full = resolveWrite(p);
      if (p === '') throw new StorageError('EINVAL', 'cannot append to the root');
      let fd;
      /** @type {number | null} the size before, null when the file is new */
      let size = null;
      try {
        fs.mkdirSync(path.dirname(full), { recursive: true });
        const st = fs.lstatSync(full, { throwIfNoEntry: false });
        if (st?.isSymbolicLink()) {
          throw new StorageError('EACCES', `append ${p}: is a symbolic link`);
        }
        fd = fs.openSync(full, 'a', 0o644);
        size = st ? fs.fstatSync(fd).size : null;
        let off = 0;
        while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
        fs.fsyncSync(fd);
      } catch (err) {
        // A full disk takes part of the bytes: cut them off, so that a
        // failed append leaves the file as it was, not a torn line the
        // next append would be read with (the engine holds the root's
        // lock, so the bytes past the old size are this call's).
        if (fd !== undefined) {
          try {
            if (size === null) fs.rmSync(full, { force: true });
            else fs.ftruncateSync(fd, size);
          } catch {
            // the error below says the append failed
          }
        }
        throw wrap(err, `append ${p}`);
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    },

    // Other processes may write the folder (the arbor CLI, an MCP server,
    // another program): the engine holds the root's lock around each
    // write (storage/rootlock.js, the Go host's protocol).
    lock() {
      if (release) throw new StorageError('EINVAL', 'the lock is already held by this memory');
      try {
        release = lockSync(root);
      } catch (err) {
        // A person whose disk filled can still search and read their
        // memory, as in a folder that refuses writes; this call's writes,
        // which would need the space and the lock, are all refused, so
        // each fails whole as it would on the full disk.
        if (err instanceof StorageError && err.code === 'ENOSPC') {
          noSpace = true;
          return;
        }
        throw wrap(err, 'lock');
      }
    },

    unlock() {
      const r = release;
      release = null;
      noSpace = false;
      r?.();
    },

    remove(p) {
      const full = resolveWrite(p);
      if (p === '') throw new StorageError('EINVAL', 'cannot remove the root');
      try {
        if (fs.lstatSync(full).isDirectory()) fs.rmdirSync(full);
        else fs.unlinkSync(full);
      } catch (err) {
        throw wrap(err, `remove ${p}`);
      }
    },

    rename(from, to) {
      const src = resolveWrite(from);
      const dst = resolveWrite(to);
      if (from === '' || to === '') throw new StorageError('EINVAL', 'cannot rename the root');
      try {
        fs.mkdirSync(path.dirname(dst), { recursive: true });
        fs.renameSync(src, dst);
      } catch (err) {
        throw wrap(err, `rename ${from} → ${to}`);
      }
      syncDir(path.dirname(dst));
    },

    list(p) {
      const full = listedFolder(p) ?? resolveRead(p);
      let names;
      try {
        names = fs.readdirSync(full);
      } catch (err) {
        throw wrap(err, `list ${p}`);
      }
      const out = [];
      // A name from readdir holds no separator: joined by hand, not by
      // path.join, which normalizes the whole path again for every file
      // (an eighth of a walk's time).
      const dir = full.endsWith(path.sep) ? full : full + path.sep;
      for (const name of names.sort(compareNames)) {
        const child = dir + name;
        try {
          const lst = fs.lstatSync(child, { bigint: true });
          if (lst.isSymbolicLink()) {
            // The tree's links are left out: what one leads to is listed
            // under its own name (linkInside). So are links that leave the
            // root, or lead nowhere: the engine could not read them anyway,
            // and walking into one must not fail the whole tree.
            if (inTree(p === '' ? name : `${p}/${name}`)) continue;
            if (!inside(fs.realpathSync.native(child))) continue;
            out.push(entry(name, fs.statSync(child, { bigint: true })));
          } else {
            const e = entry(name, lst);
            out.push(e);
            if (e.dir && !name.startsWith('.')) {
              // Bounded: a caller that lists folders and never their
              // sub-folders leaves them here.
              if (listedFolders.size >= 1 << 16) listedFolders.clear();
              listedFolders.set(p === '' ? name : `${p}/${name}`, /** @type {string} */ (e.id));
            }
          }
        } catch {
          // vanished or dangling: not part of the listing
        }
      }
      return out;
    },

    stat(p) {
      const full = resolveRead(p);
      try {
        return entry(p === '' ? '' : path.basename(full), fs.statSync(full, { bigint: true }));
      } catch (err) {
        throw wrap(err, `stat ${p}`);
      }
    },
  };
}
