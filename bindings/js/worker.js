// openMemoryInWorker: the engine in a dedicated Web Worker behind the same
// promise API as openMemory, so a page never blocks while the engine
// opens, curates or searches. The worker runs worker-entry.js; storage
// lives inside the worker, so it is described here, not passed.

import { ArborError } from './error.js';
import { MemoryMethods } from './methods.js';

/** @typedef {import('./index.d.ts').ArborMemory} ArborMemory */
/** @typedef {import('./index.d.ts').OpenOptions} OpenOptions */
/** @typedef {import('./index.d.ts').OpenResult} OpenResult */
/** @typedef {import('./worker-entry.js').WorkerReply} WorkerReply */

/**
 * Starts a worker, opens a memory in it and resolves with an ArborMemory
 * whose calls are answered by the worker.
 *
 * @type {typeof import('./worker.d.ts').openMemoryInWorker}
 */
export async function openMemoryInWorker(options = {}) {
  const { storage = { kind: 'memory' }, wasm, fixedTime, maxFileBytes, lifecycle, onLog, onExternalChange, llm, llmOptions } = options;
  const worker = new Worker(new URL('./worker-entry.js', import.meta.url), { type: 'module', name: 'arbor' });
  // The LLM adapter stays here: the worker hands pending results back, and
  // this thread makes the model calls (llm/drive.js), so the key never
  // goes to the worker and any adapter object works.
  const client = new WorkerMemory(worker, onLog, onExternalChange, llm);
  /** @type {import('./worker-entry.js').WorkerOpen} */
  const open = {
    storage,
    // A relative URL means the page's, not the worker's.
    wasm: typeof wasm === 'string' || wasm instanceof URL ? new URL(wasm, globalThis.location?.href).href : wasm,
    fixedTime: fixedTime instanceof Date ? fixedTime.toISOString() : fixedTime,
    maxFileBytes,
    lifecycle,
    llmOptions,
    forwardLogs: typeof onLog === 'function',
    forwardExternalChanges: typeof onExternalChange === 'function',
  };
  try {
    client.opened = await client.send('open', { options: open });
  } catch (err) {
    worker.terminate();
    throw err;
  }
  return client;
}

/** @implements {ArborMemory} */
class WorkerMemory extends MemoryMethods {
  /** @type {Worker} */
  #worker;
  #nextId = 1;
  /** @type {Map<number, { resolve: (v: unknown) => void, reject: (e: unknown) => void, op: string }>} */
  #pending = new Map();
  /** @type {Promise<void> | null} */
  #closing = null;
  /** @type {ArborError | null} */
  #dead = null;

  /**
   * @param {Worker} worker
   * @param {OpenOptions['onLog']} onLog
   * @param {OpenOptions['onExternalChange']} onExternalChange
   * @param {OpenOptions['llm']} llm
   */
  constructor(worker, onLog, onExternalChange, llm) {
    super(llm);
    this.#worker = worker;
    // Cast: undefined only until openMemoryInWorker sets it, before it hands
    // the memory out; callers always see an OpenResult.
    /** @type {OpenResult} */
    this.opened = /** @type {OpenResult} */ (/** @type {unknown} */ (undefined));
    /** @param {MessageEvent<WorkerReply>} event */
    worker.onmessage = ({ data }) => {
      if (data?.log) {
        onLog?.(data.log.level, data.log.message);
        return;
      }
      if (data?.externalChange) {
        try {
          onExternalChange?.();
        } catch (err) {
          console.error(err); // as openMemory does: the callback's failure is not the memory's
        }
        return;
      }
      const p = this.#pending.get(/** @type {number} */ (data?.id)); // cast: no id finds no call
      if (!p) return;
      this.#pending.delete(/** @type {number} */ (data.id)); // cast: p was found by it
      if (data.error) p.reject(rebuild(data.error));
      else p.resolve(data.value);
    };
    // The worker script failed to load, or threw outside a request.
    worker.onerror = (ev) => {
      ev.preventDefault?.();
      this.#fail(new ArborError('crashed', `arbor worker: ${ev.message || 'the worker failed to start (is worker-entry.js served as JavaScript?)'}`));
    };
    worker.onmessageerror = () => this.#fail(new ArborError('crashed', 'arbor worker: a message could not be decoded'));
  }

  /** @param {ArborError} err */
  #fail(err) {
    this.#dead = err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
    this.#worker.terminate();
  }

  /**
   * Posts one request and resolves with its answer.
   *
   * @template [T=unknown] what the worker answers to `op` (worker-entry.js)
   * @param {keyof import('./worker-entry.js').Requests} op
   * @param {Record<string, unknown>} [args]
   * @param {Transferable[]} [transfer]
   * @returns {Promise<T>}
   */
  send(op, args = {}, transfer = []) {
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#closing && op !== 'close') return Promise.reject(new ArborError('not_open', `${args.method ?? op}: the memory is closed`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // Cast: the worker answers `op` with a T (see @template).
      this.#pending.set(id, { resolve: /** @type {(v: unknown) => void} */ (resolve), reject, op });
      try {
        this.#worker.postMessage({ id, op, ...args }, transfer);
      } catch (err) {
        this.#pending.delete(id);
        // Cast: postMessage throws a DataCloneError (a DOMException).
        reject(new ArborError('invalid_params', `${args.method ?? op}: cannot be sent to the worker: ${/** @type {Error} */ (err).message}`, { cause: err }));
      }
    });
  }

  /** @type {ArborMemory['call']} */
  call(method, params = {}) {
    if (typeof method !== 'string') {
      return Promise.reject(new ArborError('invalid_request', `call: the method must be a string, not ${typeof method}`));
    }
    return this.send('call', { method, params });
  }

  /** @type {ArborMemory['exportFiles']} */
  exportFiles() {
    return this.send('exportFiles');
  }

  /** @type {ArborMemory['importFiles']} */
  importFiles(files) {
    return this.send('importFiles', { files: Array.from(files ?? []) });
  }

  /**
   * Closes the memory, then ends the worker.
   *
   * @type {ArborMemory['close']}
   */
  close() {
    // Cast (send's T): the worker answers close with nothing.
    this.#closing ??= (this.#dead ? Promise.resolve() : /** @type {Promise<void>} */ (this.send('close'))).finally(() => this.#worker.terminate());
    return this.#closing;
  }
}

// Cast: as for Memory in index.js, the method exists only where the symbol does.
if (typeof Symbol.asyncDispose === 'symbol') /** @type {WorkerMemory & AsyncDisposable} */ (WorkerMemory.prototype)[Symbol.asyncDispose] = WorkerMemory.prototype.close;

/**
 * An error from the worker as the caller would have got it on the main thread.
 *
 * @param {NonNullable<WorkerReply['error']>} error
 */
function rebuild({ name, code, message }) {
  if (name === 'ArborError' || code) return new ArborError(code ?? 'internal', message);
  const err = new Error(message);
  err.name = name;
  return err;
}
