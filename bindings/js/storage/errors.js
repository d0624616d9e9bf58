// The one error shape storage adapters throw. The host imports turn its
// code into the negative codes of docs/ABI.md §2; anything else a storage
// throws counts as an I/O failure.

/** @typedef {'ENOENT' | 'EACCES' | 'EINVAL' | 'EIO'} StorageErrorCode */

/** An error thrown by a storage adapter, with a code the host ABI maps. */
export class StorageError extends Error {
  /**
   * @param {StorageErrorCode} code
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(`${code}: ${message}`, options);
    this.name = 'StorageError';
    /** @type {StorageErrorCode} */
    this.code = code;
  }
}
