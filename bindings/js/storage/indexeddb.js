// A memory root in the browser's IndexedDB, for pages, workers and
// extension service workers.
//
// The engine calls its storage synchronously and IndexedDB is
// asynchronous, so the whole tree is loaded into an in-memory mirror when
// the memory opens (load), the engine reads and writes the mirror, and
// after each call the bindings persist what that call changed in one
// IndexedDB transaction (commit). A transaction is all or nothing: when
// the browser refuses it (quota full, storage cleared, …) the mirror is
// reloaded from the database, so what the engine sees again is exactly
// what is saved, and the caller gets an error saying so.
//
// Several tabs, workers or an extension's service worker may open the same
// database, each with its own mirror and engine. Three things keep them
// from overwriting each other:
// - a generation number, stored with the files, that every commit checks
//   and increments in the same transaction: a commit from a mirror that is
//   not the latest saved state is refused, never applied (the last line of
//   defence, which also holds where Web Locks are missing);
// - a Web Lock per database (exclusive): a memory runs each call holding
//   it, after reloading the mirror if the generation moved, so writers take
//   turns and each works on the latest tree;
// - a BroadcastChannel per database on which each commit announces its
//   generation, so the other memories reload while idle instead of at
//   their next call.
//
// Folders are implied by the files inside them: a folder left empty does
// not survive a reload (the engine never relies on one). Each file is saved
// with its modification time, so that an open trusts the size and time of
// every file unchanged since the engine last looked instead of reading the
// whole tree again (docs/design.md, "an open reads what changed"); a file
// saved by a version that kept none has time 0, which the engine never
// trusts, until it is written again.

import { StorageError } from './errors.js';
import { memory, memoryAt } from './memory.js';
import { sameBytes } from '../bytes.js';

const FILES = 'files';
/** Holds the generation: the number of commits the database has seen. */
const META = 'meta';
const GENERATION = 'generation';
const VERSION = 2;

/**
 * The name of the database's Web Lock and BroadcastChannel.
 * @param {string} name
 */
const channelName = (name) => `arbor-indexeddb:${name}`;

/**
 * Creates an IndexedDB-backed storage adapter for the database `name` (one
 * memory root per name). Nothing is read until `load()`, which openMemory
 * calls. `options.indexedDB`: the factory to use (default: the global one).
 *
 * @type {typeof import('./indexeddb.d.ts').indexedDB}
 */
export function indexedDB(name, options = {}) {
  if (typeof name !== 'string' || name === '') throw new TypeError('arbor: indexedDB(name) needs a database name');
  const factory = options.indexedDB ?? globalThis.indexedDB;
  if (!factory) throw new Error('arbor: indexedDB is not available here (a browser page, worker or extension has it)');

  let mirror = memory();
  /** @type {Set<string>} Paths written, removed or renamed since the last commit. */
  let touched = new Set();
  /** The generation the mirror holds; -1 until loaded. */
  let generation = -1;
  /** @type {Promise<void> | null} */
  let loaded = null;
  /** @type {IDBDatabase | null} */
  let db = null;
  /** @type {BroadcastChannel | null} */
  let channel = null;
  /** @type {Set<(change: { generation: number }) => void>} */
  const watchers = new Set();

  /** @returns {Promise<IDBDatabase>} */
  const connect = () =>
    new Promise((resolve, reject) => {
      if (db) return resolve(db);
      const req = factory.open(name, VERSION);
      req.onupgradeneeded = () => {
        // Version 1 had the files only: its trees are kept, at generation 0.
        const conn = req.result;
        if (!conn.objectStoreNames.contains(FILES)) conn.createObjectStore(FILES);
        if (!conn.objectStoreNames.contains(META)) conn.createObjectStore(META);
      };
      req.onsuccess = () => {
        db = req.result;
        // Another tab deleting or upgrading the database: let it.
        db.onversionchange = () => {
          db?.close();
          db = null;
        };
        resolve(db);
      };
      req.onerror = () => reject(idbError(`open database "${name}"`, req.error));
      req.onblocked = () => reject(new StorageError('EIO', `indexedDB "${name}": opening is blocked by another tab holding an older version`));
    });

  /**
   * Runs one transaction over `stores`; `fill` issues its requests and
   * returns what to resolve with once it commits.
   *
   * @template T
   * @param {string} what
   * @param {string[]} stores
   * @param {IDBTransactionMode} mode
   * @param {(tx: IDBTransaction, fail: (err: StorageError) => void) => (() => T) | void} fill
   *   returns a getter of the result when there is one to read
   * @returns {Promise<T>}
   */
  const transact = async (what, stores, mode, fill) => {
    const conn = await connect();
    return new Promise((resolve, reject) => {
      let tx;
      try {
        tx = conn.transaction(stores, mode);
      } catch (err) {
        // The connection was closed under us (the database is being deleted).
        db = null;
        return reject(idbError(what, err));
      }
      /** @type {(() => T) | void} */
      let out;
      /** @type {StorageError | null} */
      let failure = null;
      // Cast: without a getter (commit) T is unknown and the undefined is not read.
      tx.oncomplete = () => resolve(/** @type {T} */ (out?.()));
      tx.onabort = () => reject(failure ?? idbError(what, tx.error));
      try {
        out = fill(tx, (err) => {
          failure = err;
          tx.abort();
        });
      } catch (err) {
        // A request can throw at once (e.g. the quota is known to be full);
        // nothing of this transaction is kept.
        failure = idbError(what, err);
        try {
          tx.abort();
        } catch {
          // already finished
        }
      }
    });
  };

  /**
   * Reads every file, and the generation they are at, into a fresh mirror.
   * Resolves with the paths whose bytes differ from the mirror it
   * replaces (added, changed or gone).
   *
   * @returns {Promise<string[]>}
   */
  const reload = async () => {
    const { keys, values, gen } = await transact(`read database "${name}"`, [FILES, META], 'readonly', (tx) => {
      const files = tx.objectStore(FILES);
      const k = files.getAllKeys();
      const v = files.getAll();
      const g = tx.objectStore(META).get(GENERATION);
      // Cast: the stores hold what commit puts there: { data, mtime } under each path (no mtime when an earlier version saved it), the generation a number.
      return () => ({
        keys: /** @type {string[]} */ (k.result),
        values: /** @type {{ data: Uint8Array, mtime?: number }[]} */ (v.result),
        gen: /** @type {number | undefined} */ (g.result) ?? 0,
      });
    });
    const fresh = memoryAt(keys.map((k, i) => [k, values[i].data, values[i].mtime ?? 0]));
    const before = generation < 0 ? new Map() : new Map(filesUnder('').map((p) => [p, mirror.read(p)]));
    /** @type {string[]} */
    const changed = [];
    for (let i = 0; i < keys.length; i++) {
      const old = before.get(keys[i]);
      if (!old || !sameBytes(old, values[i].data)) changed.push(keys[i]);
      before.delete(keys[i]);
    }
    changed.push(...before.keys());
    mirror = fresh;
    touched = new Set();
    generation = gen;
    return changed;
  };

  const savedGeneration = () =>
    // The files' store is left out of the scope: a cheaper transaction.
    transact(`read database "${name}"`, [META], 'readonly', (tx) => {
      const g = tx.objectStore(META).get(GENERATION);
      return () => /** @type {number | undefined} */ (g.result) ?? 0; // cast: as in reload
    });

  /**
   * Every file below folder p of the mirror.
   * @param {string} p
   */
  const filesUnder = (p) => {
    /** @type {string[]} */
    const out = [];
    /** @param {string} dir */
    const walk = (dir) => {
      for (const e of mirror.list(dir)) {
        const child = dir === '' ? e.name : `${dir}/${e.name}`;
        if (e.dir) walk(child);
        else out.push(child);
      }
    };
    walk(p);
    return out;
  };

  /** @param {string} p */
  const isFile = (p) => {
    try {
      return !mirror.stat(p).dir;
    } catch {
      return false;
    }
  };

  /** The channel is open while someone watches. */
  const openChannel = () => {
    if (channel || typeof BroadcastChannel !== 'function') return;
    channel = new BroadcastChannel(channelName(name));
    channel.onmessage = ({ data }) => {
      if (typeof data?.generation !== 'number' || data.generation === generation) return;
      for (const w of watchers) {
        try {
          w({ generation: data.generation });
        } catch {
          // a failing watcher must not keep the others from hearing
        }
      }
    };
  };

  const closeChannel = () => {
    channel?.close();
    channel = null;
  };

  const announce = () => {
    if (channel) return channel.postMessage({ generation });
    if (typeof BroadcastChannel !== 'function') return;
    // Posting queues the message for every other channel at once: this one
    // can close straight away.
    const c = new BroadcastChannel(channelName(name));
    c.postMessage({ generation });
    c.close();
  };

  return {
    name,

    read: (p) => mirror.read(p),
    readAt: (p, into, offset) => mirror.readAt(p, into, offset),
    list: (p) => mirror.list(p),
    stat: (p) => mirror.stat(p),

    write(p, bytes) {
      mirror.write(p, bytes);
      touched.add(p);
    },

    remove(p) {
      const file = isFile(p);
      mirror.remove(p);
      if (file) touched.add(p);
    },

    rename(from, to) {
      const moved = isFile(from) ? [from] : filesUnder(from);
      mirror.rename(from, to);
      for (const f of moved) {
        touched.add(f);
        touched.add(to + f.slice(from.length));
      }
    },

    snapshot: () => mirror.snapshot(),

    load() {
      loaded ??= reload().then(() => {}, (err) => {
        loaded = null;
        throw err;
      });
      return loaded;
    },

    get pending() {
      return touched.size;
    },

    get generation() {
      return generation;
    },

    async exclusive(fn) {
      const run = async () => {
        let reloaded = false;
        /** @type {string[] | undefined} */
        let changed;
        // Nothing to compare before the first load (which fn will do).
        if (generation >= 0 && touched.size === 0 && (await savedGeneration()) !== generation) {
          changed = await reload();
          reloaded = true;
        }
        return fn(reloaded, changed);
      };
      const locks = globalThis.navigator?.locks;
      return locks ? locks.request(channelName(name), { mode: 'exclusive' }, run) : run();
    },

    watch(listener) {
      if (typeof listener !== 'function') throw new TypeError('arbor: watch(listener) needs a function');
      watchers.add(listener);
      openChannel();
      return () => {
        watchers.delete(listener);
        if (watchers.size === 0) closeChannel();
      };
    },

    async commit() {
      if (touched.size === 0) return;
      const paths = [...touched];
      touched = new Set();
      const base = generation;
      try {
        await transact(`save to database "${name}"`, [FILES, META], 'readwrite', (tx, fail) => {
          const meta = tx.objectStore(META);
          const files = tx.objectStore(FILES);
          const check = meta.get(GENERATION);
          // The check and the writes are one transaction, so no other
          // commit can come between them.
          check.onsuccess = () => {
            const saved = /** @type {number | undefined} */ (check.result) ?? 0; // cast: as in reload
            if (saved !== base) {
              fail(new StorageError('EIO', `indexedDB "${name}": another tab or worker saved changes (generation ${saved}) after this memory read the tree (generation ${base}); nothing of this change was saved`));
              return;
            }
            try {
              for (const p of paths) {
                if (isFile(p)) files.put({ data: mirror.read(p), mtime: mirror.stat(p).mtime }, p);
                else files.delete(p);
              }
              meta.put(base + 1, GENERATION);
            } catch (err) {
              fail(idbError(`save to database "${name}"`, err));
            }
          };
        });
      } catch (err) {
        // What the engine sees must be what is saved.
        try {
          await reload();
        } catch (again) {
          // Cast: transact and reload reject with StorageErrors.
          throw new StorageError('EIO', `${/** @type {Error} */ (err).message}; reloading the saved tree failed too: ${/** @type {Error} */ (again).message}`, { cause: err });
        }
        throw err;
      }
      generation = base + 1;
      announce();
    },

    close() {
      db?.close();
      db = null;
      loaded = null;
      generation = -1;
      watchers.clear();
      closeChannel();
    },
  };
}

/**
 * Deletes the database `name` and everything in it (the memory using it must be closed).
 *
 * @type {typeof import('./indexeddb.d.ts').deleteIndexedDB}
 */
export function deleteIndexedDB(name, options = {}) {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  return new Promise((resolve, reject) => {
    const req = factory.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(idbError(`delete database "${name}"`, req.error));
  });
}

/**
 * A StorageError saying plainly what the browser refused.
 *
 * @param {string} what
 * @param {unknown} err a DOMException, or whatever a request threw
 * @returns {StorageError}
 */
function idbError(what, err) {
  // Cast: only the name and the message are read.
  const e = /** @type {{ name?: string, message?: string } | null | undefined} */ (err);
  const kind = e?.name ?? 'Error';
  if (kind === 'QuotaExceededError') {
    return new StorageError('ENOSPC', `indexedDB: ${what}: the browser's storage quota is full (QuotaExceededError); the change was not saved — free some space or export the notes`, { cause: err });
  }
  return new StorageError('EIO', `indexedDB: ${what}: ${kind}: ${e?.message ?? 'unknown error'}`, { cause: err });
}
