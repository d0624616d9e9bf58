import type { Storage } from './types.js';

export type { Storage, StorageEntry } from './types.js';

/** A storage adapter kept in the browser's IndexedDB. */
export interface IndexedDBStorage extends Storage {
  /** The database name. */
  readonly name: string;
  /** Reads the whole tree into memory (once; openMemory calls it). */
  load(): Promise<void>;
  /**
   * Saves the changes since the last commit in one IndexedDB transaction
   * (openMemory calls it after every call). When the browser refuses
   * (e.g. `QuotaExceededError`), nothing of it is kept, the tree in
   * memory is reloaded from the database, and it rejects with a
   * StorageError that says so.
   */
  commit(): Promise<void>;
  /** How many paths have changes not yet committed. */
  readonly pending: number;
  /** Every file as UTF-8 text, keyed by path, sorted. */
  snapshot(): Record<string, string>;
  /** Closes the database connection; a later load() or commit() opens it again. */
  close(): void;
}

/**
 * A memory root in the IndexedDB database `name`, for pages, Web Workers
 * and extension service workers. The tree is loaded into memory when the
 * memory opens and written through after every call, one transaction per
 * call, so it survives reloads. Folders are implied by their files (an
 * empty one is not kept). One tab at a time should write a database: each
 * open memory keeps its own copy of the tree.
 *
 * @example
 * import { openMemory, indexedDB } from 'arbor-memory';
 * const mem = await openMemory({ storage: indexedDB('notes') });
 */
export declare function indexedDB(name: string, options?: { indexedDB?: IDBFactory }): IndexedDBStorage;

/** Deletes the database `name` (close the memory using it first). */
export declare function deleteIndexedDB(name: string, options?: { indexedDB?: IDBFactory }): Promise<void>;
