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
// Folders are implied by the files inside them: a folder left empty does
// not survive a reload (the engine never relies on one), and modification
// times restart at load (the engine does not use them).

import { StorageError } from './errors.js';
import { memory } from './memory.js';

const STORE = 'files';
const VERSION = 1;

/**
 * Creates an IndexedDB-backed storage adapter for the database `name`.
 * Nothing is read until `load()`, which openMemory calls.
 *
 * @param {string} name the database name (one memory root per name)
 * @param {{ indexedDB?: IDBFactory }} [options] the factory to use (default: the global one)
 * @returns {import('./indexeddb.js').IndexedDBStorage}
 */
export function indexedDB(name, options = {}) {
  if (typeof name !== 'string' || name === '') throw new TypeError('arbor: indexedDB(name) needs a database name');
  const factory = options.indexedDB ?? globalThis.indexedDB;
  if (!factory) throw new Error('arbor: indexedDB is not available here (a browser page, worker or extension has it)');

  let mirror = memory();
  /** Paths written, removed or renamed since the last commit. */
  let touched = new Set();
  /** @type {Promise<void> | null} */
  let loaded = null;
  /** @type {IDBDatabase | null} */
  let db = null;

  const connect = () =>
    new Promise((resolve, reject) => {
      if (db) return resolve(db);
      const req = factory.open(name, VERSION);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
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

  /** Reads every file into a fresh mirror. */
  const reload = async () => {
    const conn = await connect();
    const { keys, values } = await new Promise((resolve, reject) => {
      const tx = conn.transaction(STORE, 'readonly');
      const store = tx.objectStore(STORE);
      const k = store.getAllKeys();
      const v = store.getAll();
      tx.oncomplete = () => resolve({ keys: k.result, values: v.result });
      tx.onerror = () => reject(idbError(`read database "${name}"`, tx.error));
      tx.onabort = () => reject(idbError(`read database "${name}"`, tx.error));
    });
    const fresh = memory();
    for (let i = 0; i < keys.length; i++) fresh.write(keys[i], values[i].data);
    mirror = fresh;
    touched = new Set();
  };

  /** Every file below folder p of the mirror. */
  const filesUnder = (p) => {
    const out = [];
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

  const isFile = (p) => {
    try {
      return !mirror.stat(p).dir;
    } catch {
      return false;
    }
  };

  return {
    name,

    read: (p) => mirror.read(p),
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
      loaded ??= reload().catch((err) => {
        loaded = null;
        throw err;
      });
      return loaded;
    },

    get pending() {
      return touched.size;
    },

    async commit() {
      if (touched.size === 0) return;
      const paths = [...touched];
      touched = new Set();
      try {
        const conn = await connect();
        await new Promise((resolve, reject) => {
          const tx = conn.transaction(STORE, 'readwrite');
          const store = tx.objectStore(STORE);
          tx.oncomplete = () => resolve();
          tx.onabort = () => reject(idbError(`save to database "${name}"`, tx.error));
          try {
            for (const p of paths) {
              if (isFile(p)) store.put({ data: mirror.read(p) }, p);
              else store.delete(p);
            }
          } catch (err) {
            // A put can throw at once (e.g. the quota is known to be full);
            // nothing of this transaction is kept.
            try {
              tx.abort();
            } catch {
              // already finished
            }
            reject(idbError(`save to database "${name}"`, err));
          }
        });
      } catch (err) {
        // What the engine sees must be what is saved.
        try {
          await reload();
        } catch (again) {
          throw new StorageError('EIO', `${err.message}; reloading the saved tree failed too: ${again.message}`, { cause: err });
        }
        throw err;
      }
    },

    close() {
      db?.close();
      db = null;
      loaded = null;
    },
  };
}

/** Deletes the database `name` and everything in it (the memory using it must be closed). */
export function deleteIndexedDB(name, options = {}) {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  return new Promise((resolve, reject) => {
    const req = factory.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(idbError(`delete database "${name}"`, req.error));
  });
}

/** A StorageError saying plainly what the browser refused. */
function idbError(what, err) {
  const kind = err?.name ?? 'Error';
  if (kind === 'QuotaExceededError') {
    return new StorageError('EIO', `indexedDB: ${what}: the browser's storage quota is full (QuotaExceededError); the change was not saved — free some space or export the notes`, { cause: err });
  }
  return new StorageError('EIO', `indexedDB: ${what}: ${kind}: ${err?.message ?? 'unknown error'}`, { cause: err });
}
