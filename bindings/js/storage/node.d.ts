import type { Storage } from './types.js';

export type { Storage, StorageEntry } from './types.js';

/** A storage adapter over a folder of the local file system. */
export interface NodeStorage extends Storage {
  /** The root folder, absolute and with symbolic links resolved. */
  readonly root: string;
}

/**
 * A memory root in the folder `dir` (Node only; created if missing).
 *
 * Confined to `dir`: absolute paths, `..` and symbolic links that lead
 * outside it are refused with `EACCES` (links leaving the root are left out
 * of listings). Symbolic links inside it are not followed either (in
 * `.arbor/` aside): listings leave them out, and a read, listing or stat
 * through one is refused with `EACCES`, so that what a link leads to is
 * read once, under its own name. Writes are atomic: a temporary dot-file in the same folder,
 * fsync, then rename. The engine holds the folder's lock (`.arbor/lock`,
 * shared with the arbor CLI and MCP server) around each write, so writers
 * on one folder take turns while readers never wait; a write that waits
 * longer than two minutes for it fails with code `busy`.
 *
 * A memory watching the folder hears what others change in it. On a
 * network file system (NFS, SMB, sshfs and other FUSE file systems, WSL's
 * Windows drives: told on Linux by the folder's statfs type, or by
 * `network`), what other machines change raises no event here, so the
 * memory also scans the folder before a call, at most every 2 seconds.
 *
 * @example
 * import { openMemory, nodeFs } from 'arbor-memory';
 * const mem = await openMemory({ storage: nodeFs('./notes') });
 */
export declare function nodeFs(dir: string, options?: {
  /** Treat the folder as on a network file system (scan as well as watch), or not; by default told from the file system. */
  network?: boolean;
}): NodeStorage;
