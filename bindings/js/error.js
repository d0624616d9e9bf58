// The error every failed call of the JS API rejects with.

/** @typedef {import('./index.d.ts').ArborError} DeclaredArborError */

/**
 * An error answered by the engine (docs/ABI.md §3: `invalid_params`,
 * `invalid_path`, `not_found`, `read_only`, …) or raised by the bindings
 * themselves: `not_open` after close(), `crashed` when the module trapped
 * and `memory_limit` when it needed more than its cap (an ArborMemory
 * reopens at the next call), `deadline` when a worker's call ran past
 * callTimeoutMs (docs/sandbox.md), `abi_version` for a module of another
 * ABI.
 *
 * @implements {Omit<DeclaredArborError, 'name'>}
 */
export class ArborError extends Error {
  /**
   * @param {string} code a stable code to branch on
   * @param {string} message a sentence for people
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    // `name` is left out of the check above: JS cannot narrow the type of
    // a property it inherits (Error's name: string) to the declared literal.
    this.name = 'ArborError';
    /** @type {DeclaredArborError['code']} */
    this.code = code;
  }
}

/**
 * A type-level check for `npm run typecheck`: `From` must be assignable to
 * `To`, or tsc reports it here. A class's `@implements` checks only its
 * instances; `Assignable<ConstructorParameters<typeof Impl>,
 * ConstructorParameters<typeof Declared>>` checks that its constructor
 * takes every argument list the declaration allows.
 *
 * @template To
 * @template {To} From
 * @typedef {From} Assignable
 */

/** @typedef {Assignable<ConstructorParameters<typeof ArborError>, ConstructorParameters<typeof import('./index.d.ts').ArborError>>} ArborErrorConstructor */
