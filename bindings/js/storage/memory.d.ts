import type { Storage } from './types.js';

export type { Storage, StorageEntry } from './types.js';

/** A storage adapter kept in memory, with a way to look inside. */
export interface MemoryStorage extends Storage {
  /** Every file as UTF-8 text, keyed by path, sorted: handy in tests. */
  snapshot(): Record<string, string>;
  readAt(path: string, into: Uint8Array, offset: number): number;
}

/**
 * A Map-backed memory root that lives as long as the object: for tests,
 * demos and pages without persistence. Runs in any JS engine. Folders are
 * created implicitly by writes (like `mkdir -p`).
 *
 * @param initialFiles path → content (strings are stored as UTF-8).
 *
 * @example
 * const store = memory({ 'notes/context.md': '# Notes\n' });
 * const mem = await openMemory({ storage: store });
 */
export declare function memory(initialFiles?: Record<string, string | Uint8Array>): MemoryStorage;

/**
 * A memory root holding `files` with the modification times they were saved
 * with (Unix milliseconds; 0 when unknown, which the engine never trusts):
 * the in-memory mirror of a storage that keeps times of its own, such as
 * `indexedDB`. Not exported by the package.
 *
 * @param files path, bytes, modification time
 */
export declare function memoryAt(files: Iterable<[string, Uint8Array, number]>): MemoryStorage;
