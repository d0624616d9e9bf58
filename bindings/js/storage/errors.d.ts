/**
 * The codes a storage adapter throws; the host ABI maps them to -1, -2, -3, -4, `EBUSY` (a lock not
 * taken in time) to -5 and `ECHANGED` (a swap whose file changed) to -6.
 */
export type StorageErrorCode = 'ENOENT' | 'EACCES' | 'EINVAL' | 'EIO' | 'EBUSY' | 'ECHANGED';

/** An error thrown by a storage adapter. Any other thrown value counts as `EIO`. */
export declare class StorageError extends Error {
  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'StorageError';
  readonly code: StorageErrorCode;
}
