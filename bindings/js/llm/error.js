// The error a model adapter rejects with.

/**
 * A failed model call. `code` is one of the error codes of docs/ABI.md §6
 * (`timeout`, `rate_limit`, `auth`, `http`, `invalid`, `cancelled`), what
 * the memory hands to the engine's `resume`.
 */
export class LLMError extends Error {
  /**
   * @param {'timeout' | 'rate_limit' | 'auth' | 'http' | 'invalid' | 'cancelled'} code
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = 'LLMError';
    /** @type {string} */
    this.code = code;
    /** The last HTTP status, 0 when there was no answer. */
    this.status = 0;
    /** HTTP requests made, retries included. */
    this.attempts = 0;
    /** The provider's name. */
    this.provider = '';
  }
}
