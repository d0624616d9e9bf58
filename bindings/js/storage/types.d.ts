/** One name in a folder listing, or the description of one path (docs/ABI.md §2). */
export interface StorageEntry {
  /** The last path segment; "" for the root. */
  name: string;
  /** True for a folder. */
  dir: boolean;
  /** Size in bytes; 0 for a folder. */
  size: number;
  /**
   * Last modification, Unix milliseconds by the real clock (`Date.now()`
   * when written); 0 when the storage has none, which makes every open
   * read the file again.
   */
  mtime: number;
  /**
   * Optional: the last change of the file's status, Unix milliseconds (a
   * POSIX ctime), which a tool that sets `mtime` back (`cp -p`, `tar x`)
   * does not. With it, an open reads a file whose bytes changed under a
   * restored `mtime`; without it, one of the same size is trusted unread.
   */
  ctime?: number;
  /** Optional: the file's inode number, or another number that changes when the file is replaced. */
  ino?: number;
  /**
   * Optional, for storages that can show one folder under two names (a
   * bind mount; a symbolic link, which a storage leaves out of `list`,
   * docs/ABI.md §2): tells folders apart (a device and inode number, say),
   * so that a walk of the tree (the `fs_walk` import) does not go down
   * again into a folder that contains itself. Without it every folder is
   * taken as new.
   */
  id?: string;
}

/**
 * Where a memory root lives. The engine calls these methods synchronously
 * while it runs, so they must be synchronous. Paths are relative to the
 * root, `/`-separated, "" being the root; the host has already checked them
 * against the rules of docs/ABI.md §2, but an adapter should refuse on its
 * own anything that would leave its root.
 *
 * Failures throw an error whose `code` is `'ENOENT'` (not found),
 * `'EACCES'` (denied, outside the root), `'EINVAL'` (malformed path, or a
 * folder where a file was expected) or `'EIO'` (anything else).
 */
export interface Storage {
  /** The whole content of a file. */
  read(path: string): Uint8Array;
  /**
   * Optional: reads part of a file into `into`, from byte `offset`, and returns how many bytes it
   * read (fewer than `into.length` only at the end of the file). The engine reads the segments of
   * its persisted index this way, where a query needs them, instead of holding them whole in its
   * memory. Without it the host slices what `read` returns.
   */
  readAt?(path: string, into: Uint8Array, offset: number): number;
  /** Replaces a file atomically, creating missing parent folders. */
  write(path: string, bytes: Uint8Array): void;
  /** Removes a file or an empty folder. */
  remove(path: string): void;
  /** Moves a file, replacing the destination atomically and creating missing parent folders. */
  rename(from: string, to: string): void;
  /** The names in a folder (any order; the host sorts them). */
  list(path: string): StorageEntry[];
  /** Describes one file or folder. */
  stat(path: string): StorageEntry;
  /**
   * Optional, for folders others write too: `write`, if the file still holds `old` (or is absent,
   * when `existed` is false), checked once the new bytes are durable and just before they replace
   * it; otherwise throws code `ECHANGED` and writes nothing. Without it the host reads the file and
   * compares before `write`, which is enough for a store only this thread writes.
   */
  swap?(path: string, bytes: Uint8Array, old: Uint8Array, existed: boolean): void;
  /**
   * Optional: adds bytes at the end of a file (the audit log), creating it
   * and its parent folders, durable when it returns. An append that throws
   * leaves the file as it was (a full disk's part of the bytes cut off).
   * Without it the host reads the file and writes it back whole.
   */
  append?(path: string, bytes: Uint8Array): void;
  /**
   * Optional, for folders other processes write too (the arbor CLI, an MCP
   * server): takes the root's cross-process lock, waiting while another
   * process holds it, or throws code `EBUSY`. The engine takes it around
   * every write (never nested) and releases it with `unlock`.
   */
  lock?(): void;
  /** Optional, with `lock`: releases the lock. */
  unlock?(): void;
  /**
   * Optional, for folders others change (an editor, git, another
   * process): calls `listener` with the paths that changed (files or
   * folders, relative to the root), or with `null` when changes may have
   * been missed (scan everything). A memory reads them again before its
   * next call. Throws when the storage cannot be watched; the memory then
   * scans before its calls instead. `warn`, when given, hears once why
   * the storage falls back to scanning part of it (a folder past the
   * system's limit of watches), which only the person running it can
   * fix. Returns a function that stops it.
   */
  changes?(listener: (paths: string[] | null) => void, warn?: (message: string) => void): () => void;
  /**
   * Optional, for asynchronous stores (IndexedDB): brings the tree into
   * memory; awaited before the engine starts.
   */
  load?(): Promise<void>;
  /**
   * Optional: saves every change since the last commit, all or nothing;
   * awaited after each call of an ArborMemory. When it rejects, the store
   * must be back at its last saved state (the memory then restarts on it
   * and the call rejects with code `io`).
   */
  commit?(): Promise<void>;
  /**
   * Optional, for stores that other memories may change (IndexedDB shared
   * by tabs and workers): runs `fn` holding the store's exclusive lock, and
   * resolves with what it returns. Before `fn` runs, a store that another
   * writer changed since it last loaded reloads itself and passes
   * `reloaded = true`, with the paths whose bytes changed when it knows
   * them: the memory then has its engine read those again (or restarts it
   * on the new tree when `changed` is missing). An ArborMemory runs every
   * call, with its commit, inside it.
   */
  exclusive?<T>(fn: (reloaded: boolean, changed?: string[]) => Promise<T> | T): Promise<T>;
  /**
   * Optional, with `exclusive`: calls `listener` when another writer saved
   * changes (it may come late or twice: `exclusive` decides). Returns a
   * function that stops the calls.
   */
  watch?(listener: (change: { generation: number }) => void): () => void;
}
