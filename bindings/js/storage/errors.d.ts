/**
 * The codes a storage adapter throws; the host ABI maps them to -1, -2, -3, -4, `EBUSY` (a lock not
 * taken in time) to -5, `ECHANGED` (a swap whose file changed) to -6, `ENOSPC` (no space left: a
 * full disk, a quota) to -8, `ENAMETOOLONG` (a path past the system's limit) to -9 and `EXDEV` (a
 * rename whose paths are on different devices: a mount inside the root) to -10.
 */
export type StorageErrorCode = 'ENOENT' | 'EACCES' | 'EINVAL' | 'EIO' | 'EBUSY' | 'ECHANGED' | 'ENOSPC' | 'ENAMETOOLONG' | 'EXDEV';

/** An error thrown by a storage adapter. Any other thrown value counts as `EIO`. */
export declare class StorageError extends Error {
  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'StorageError';
  readonly code: StorageErrorCode;
}
