// The error a model adapter rejects with.

/** @typedef {import('./index.d.ts').LLMErrorCode} LLMErrorCode */
/** @typedef {import('./index.d.ts').LLMError} DeclaredLLMError */

/**
 * A failed model call. `code` is one of the error codes of docs/ABI.md §6
 * (`timeout`, `rate_limit`, `auth`, `http`, `invalid`, `cancelled`), what
 * the memory hands to the engine's `resume`.
 *
 * @implements {Omit<DeclaredLLMError, 'name'>}
 */
export class LLMError extends Error {
  /**
   * @param {LLMErrorCode} code
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = 'LLMError'; // not checked: see ArborError (../error.js)
    /** @type {LLMErrorCode} */
    this.code = code;
    /** The last HTTP status, 0 when there was no answer. */
    this.status = 0;
    /** HTTP requests made, retries included. */
    this.attempts = 0;
    /** The provider's name. */
    this.provider = '';
  }
}

/** @typedef {import('../error.js').Assignable<ConstructorParameters<typeof LLMError>, ConstructorParameters<typeof import('./index.d.ts').LLMError>>} LLMErrorConstructor */
