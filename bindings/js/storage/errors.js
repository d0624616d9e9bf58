// The one error shape storage adapters throw. The host imports turn its
// code into the negative codes of docs/ABI.md §2; anything else a storage
// throws counts as an I/O failure.

/** @typedef {import('./errors.d.ts').StorageErrorCode} StorageErrorCode */
/** @typedef {import('./errors.d.ts').StorageError} DeclaredStorageError */

/**
 * An error thrown by a storage adapter, with a code the host ABI maps.
 *
 * @implements {Omit<DeclaredStorageError, 'name'>}
 */
export class StorageError extends Error {
  /**
   * @param {StorageErrorCode} code
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(`${code}: ${message}`, options);
    this.name = 'StorageError'; // not checked: see ArborError (../error.js)
    /** @type {StorageErrorCode} */
    this.code = code;
  }
}

/** @typedef {import('../error.js').Assignable<ConstructorParameters<typeof StorageError>, ConstructorParameters<typeof import('./errors.d.ts').StorageError>>} StorageErrorConstructor */
