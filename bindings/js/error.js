// The error every failed call of the JS API rejects with.

/**
 * An error answered by the engine (docs/ABI.md §3: `invalid_params`,
 * `invalid_path`, `not_found`, …) or raised by the bindings themselves:
 * `not_open` after close(), `crashed` once the module has trapped (the
 * memory must be reopened), `abi_version` for a module of another ABI.
 */
export class ArborError extends Error {
  /**
   * @param {string} code a stable code to branch on
   * @param {string} message a sentence for people
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = 'ArborError';
    /** @type {string} */
    this.code = code;
  }
}
