// An in-memory memory root: a Map of paths, for tests, demos and pages
// that do not need persistence. No Node APIs, so it runs in any JS engine.
// Folders are created implicitly by writes and renames (like mkdir -p) and
// otherwise behave like a file system's: remove refuses a non-empty one.

import { StorageError } from './errors.js';
import { pathProblem, compareNames } from '../paths.js';

/**
 * @typedef {{ dir: true, data: null, mtime: number } | { dir: false, data: Uint8Array, mtime: number }} Node
 * @typedef {import('./types.d.ts').StorageEntry} DirEntry
 * @typedef {import('./memory.d.ts').MemoryStorage} MemoryStorage
 */

const encoder = new TextEncoder();

/**
 * Creates a Map-backed storage adapter.
 *
 * `initialFiles`: file path → content (strings are stored as UTF-8);
 * parent folders are created.
 *
 * @type {typeof import('./memory.d.ts').memory}
 */
export function memory(initialFiles = {}) {
  return build(initialFiles, []);
}

/**
 * A memory storage holding files with the modification times they were
 * saved with, not the time of this call: the mirror of a storage that keeps
 * times of its own (indexeddb.js), so that the engine can trust the times
 * of the files unchanged since its last look instead of reading them all.
 *
 * @type {typeof import('./memory.d.ts').memoryAt}
 */
export function memoryAt(files) {
  return build({}, files);
}

/**
 * @param {Record<string, string | Uint8Array>} initialFiles stamped now
 * @param {Iterable<[string, Uint8Array, number]>} dated path, bytes, modification time
 * @returns {MemoryStorage}
 */
function build(initialFiles, dated) {
  /** @type {Map<string, Node>} every file and folder by path; "" is the root */
  const nodes = new Map([['', { dir: true, data: null, mtime: Date.now() }]]);
  /**
   * The names inside each folder. Every folder of `nodes` has its set here,
   * so a lookup of a known folder is cast to Set<string> below.
   * @type {Map<string, Set<string>>}
   */
  const kids = new Map([['', new Set()]]);

  /** @param {string} p */
  const check = (p) => {
    const problem = pathProblem(p);
    if (problem) throw new StorageError('EINVAL', `path ${JSON.stringify(p)}: ${problem}`);
  };
  /** @param {string} p */
  const parentOf = (p) => {
    const i = p.lastIndexOf('/');
    return i < 0 ? '' : p.slice(0, i);
  };
  /** @param {string} p */
  const baseOf = (p) => p.slice(p.lastIndexOf('/') + 1);
  /** @param {string} p */
  const get = (p) => {
    const node = nodes.get(p);
    if (!node) throw new StorageError('ENOENT', `${JSON.stringify(p)}: no such file or directory`);
    return node;
  };

  /**
   * Creates folder p and its missing parents; a file in the way is an error.
   * @param {string} p
   */
  const mkdirs = (p) => {
    if (p === '') return;
    const node = nodes.get(p);
    if (node) {
      if (!node.dir) throw new StorageError('EINVAL', `${JSON.stringify(p)} is a file, not a folder`);
      return;
    }
    mkdirs(parentOf(p));
    nodes.set(p, { dir: true, data: null, mtime: Date.now() });
    kids.set(p, new Set());
    /** @type {Set<string>} */ (kids.get(parentOf(p))).add(baseOf(p)); // cast: the parent was made above
  };

  /**
   * @param {string} p
   * @param {Node} node
   */
  const put = (p, node) => {
    nodes.set(p, node);
    if (node.dir && !kids.has(p)) kids.set(p, new Set());
    /** @type {Set<string>} */ (kids.get(parentOf(p))).add(baseOf(p)); // cast: callers make the parent first
  };

  /** @param {string} p */
  const drop = (p) => {
    nodes.delete(p);
    kids.delete(p);
    kids.get(parentOf(p))?.delete(baseOf(p));
  };

  /**
   * @param {string} p
   * @param {Node} node
   * @returns {DirEntry}
   */
  const entry = (p, node) => ({
    name: baseOf(p),
    dir: node.dir,
    size: node.dir ? 0 : node.data.length,
    mtime: node.mtime,
  });

  /** @type {MemoryStorage} */
  const store = {
    read(p) {
      check(p);
      const node = get(p);
      if (node.dir) throw new StorageError('EINVAL', `${JSON.stringify(p)} is a folder`);
      return node.data.slice();
    },

    readAt(p, into, offset) {
      check(p);
      const node = get(p);
      if (node.dir) throw new StorageError('EINVAL', `${JSON.stringify(p)} is a folder`);
      const part = node.data.subarray(offset, offset + into.length);
      into.set(part);
      return part.length;
    },

    write(p, bytes) {
      check(p);
      if (p === '') throw new StorageError('EINVAL', 'cannot write the root');
      if (nodes.get(p)?.dir) throw new StorageError('EINVAL', `${JSON.stringify(p)} is a folder`);
      mkdirs(parentOf(p));
      // Copy: the caller's buffer may be a view into guest memory.
      put(p, { dir: false, data: Uint8Array.from(bytes), mtime: Date.now() });
    },

    remove(p) {
      check(p);
      if (p === '') throw new StorageError('EINVAL', 'cannot remove the root');
      const node = get(p);
      if (node.dir && /** @type {Set<string>} */ (kids.get(p)).size > 0) { // cast: a folder's
        throw new StorageError('EINVAL', `${JSON.stringify(p)}: folder not empty`);
      }
      drop(p);
    },

    rename(from, to) {
      check(from);
      check(to);
      if (from === '' || to === '') throw new StorageError('EINVAL', 'cannot rename the root');
      const node = get(from);
      if (from === to) return;
      const target = nodes.get(to);
      if (!node.dir) {
        if (target?.dir) throw new StorageError('EINVAL', `${JSON.stringify(to)} is a folder`);
        mkdirs(parentOf(to));
        drop(from);
        put(to, node);
        return;
      }
      if (to.startsWith(from + '/')) throw new StorageError('EINVAL', `cannot move ${JSON.stringify(from)} into itself`);
      if (target && !(target.dir && /** @type {Set<string>} */ (kids.get(to)).size === 0)) { // cast: a folder's
        throw new StorageError('EINVAL', `${JSON.stringify(to)} exists`);
      }
      if (target) drop(to);
      mkdirs(parentOf(to));
      const moved = [...nodes.keys()].filter((k) => k === from || k.startsWith(from + '/')).sort();
      // Cast: `moved` are keys of `nodes`.
      const subtree = moved.map((k) => /** @type {[string, Node]} */ ([k, nodes.get(k)]));
      for (const [k] of subtree) drop(k);
      // Parents sort before their children, so each folder exists (with an
      // empty name set) before its contents are put back.
      for (const [k, n] of subtree) put(to + k.slice(from.length), n);
    },

    list(p) {
      check(p);
      const node = get(p);
      if (!node.dir) throw new StorageError('EINVAL', `${JSON.stringify(p)} is not a folder`);
      const prefix = p === '' ? '' : p + '/';
      // Cast: p is a folder, and the names in a folder's set are in `nodes`.
      return [.../** @type {Set<string>} */ (kids.get(p))].sort(compareNames).map((name) => entry(prefix + name, /** @type {Node} */ (nodes.get(prefix + name))));
    },

    stat(p) {
      check(p);
      return entry(p, get(p));
    },

    snapshot() {
      const decoder = new TextDecoder();
      /** @type {Record<string, string>} */
      const out = {};
      const files = [...nodes.entries()].filter(([, n]) => !n.dir).map(([k]) => k).sort(compareNames);
      for (const k of files) out[k] = decoder.decode(/** @type {Node & { dir: false }} */ (nodes.get(k)).data); // cast: k is a file of `nodes`
      return out;
    },
  };

  for (const [p, content] of Object.entries(initialFiles)) {
    store.write(p, typeof content === 'string' ? encoder.encode(content) : content);
  }
  for (const [p, bytes, mtime] of dated) {
    store.write(p, bytes);
    get(p).mtime = mtime;
  }
  return store;
}
