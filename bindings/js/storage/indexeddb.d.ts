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
  /**
   * How many commits the database had seen when this storage last loaded
   * or committed (-1 before the first load). Every commit checks it and adds
   * one in the same transaction: a commit made on an older tree than the
   * saved one is refused with a StorageError and nothing of it is kept.
   */
  readonly generation: number;
  /**
   * Runs `fn` holding the Web Lock `arbor-indexeddb:<name>` (exclusive),
   * after reloading the tree when another tab or worker committed since
   * this storage last loaded (`reloaded` is then true, and `changed` lists
   * the paths whose bytes differ from what it held).
   */
  exclusive<T>(fn: (reloaded: boolean, changed?: string[]) => Promise<T> | T): Promise<T>;
  /** Calls `listener` when another storage on the same database commits (BroadcastChannel `arbor-indexeddb:<name>`). */
  watch(listener: (change: { generation: number }) => void): () => void;
  /** Every file as UTF-8 text, keyed by path, sorted. */
  snapshot(): Record<string, string>;
  /** Closes the database connection and the channel, and forgets the watchers; a later load() or commit() opens it again. */
  close(): void;
}

/**
 * A memory root in the IndexedDB database `name`, for pages, Web Workers
 * and extension service workers. The tree is loaded into memory when the
 * memory opens and written through after every call, one transaction per
 * call, so it survives reloads. Folders are implied by their files (an
 * empty one is not kept).
 *
 * Any number of tabs, workers and service workers of one origin may open
 * the same database at once: each call runs holding the database's Web
 * Lock, on the latest saved tree (a memory behind another's save reloads
 * and restarts its engine first), so every write lands and none overwrites
 * a newer one. Other memories hear of a save on a BroadcastChannel and
 * reload while idle (see `onExternalChange`). Lifecycle signals a memory
 * batched but had not flushed when it reloads are dropped.
 *
 * @example
 * import { openMemory, indexedDB } from 'arbor-memory';
 * const mem = await openMemory({ storage: indexedDB('notes') });
 */
export declare function indexedDB(name: string, options?: { indexedDB?: IDBFactory }): IndexedDBStorage;

/** Deletes the database `name` (close the memory using it first). */
export declare function deleteIndexedDB(name: string, options?: { indexedDB?: IDBFactory }): Promise<void>;
