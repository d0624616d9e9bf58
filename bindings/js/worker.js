// openMemoryInWorker: the engine in a worker behind the same promise API as
// openMemory — a dedicated Web Worker in browsers, a worker_threads Worker
// in Node — so the calling thread never blocks while the engine opens,
// curates or searches, and a call can be given a deadline: a call running
// in a worker can be stopped by ending the worker, which nothing can do to
// a call running on the caller's own thread. The worker runs
// worker-entry.js; storage lives inside the worker, so it is described
// here, not passed.

import { ArborError } from './error.js';
import { MemoryMethods } from './methods.js';

/** @typedef {import('./worker.d.ts').WorkerMemory} ArborMemory the methods a memory in a worker has (all but sync's) */
/** @typedef {import('./index.d.ts').OpenOptions} OpenOptions */
/** @typedef {import('./index.d.ts').OpenResult} OpenResult */
/** @typedef {import('./worker-entry.js').WorkerReply} WorkerReply */
/** @typedef {import('./worker-entry.js').WorkerOpen} WorkerOpen */
/** @typedef {import('./worker.d.ts').WorkerOpenOptions} WorkerOpenOptions */

/**
 * The part of a Web Worker this file uses; in Node, NodeWorker provides it
 * over worker_threads.
 *
 * @typedef {object} WorkerLike
 * @property {((event: { data: WorkerReply }) => void) | null} onmessage
 * @property {((event: { message?: string, preventDefault?: () => void }) => void) | null} onerror
 * @property {(() => void) | null} onmessageerror
 * @property {(message: unknown, transfer?: Transferable[]) => void} postMessage
 * @property {() => void} terminate
 */

/**
 * A running worker and the requests sent to it that it has not answered.
 *
 * @typedef {object} Running
 * @property {WorkerLike} worker
 * @property {Map<number, { resolve: (v: unknown) => void, reject: (e: unknown) => void }>} pending
 */

/** WorkerMemory's method that starts a worker: for openMemoryInWorker only. */
const start = Symbol('start');

/**
 * Starts a worker, opens a memory in it and resolves with an ArborMemory
 * whose calls are answered by the worker.
 *
 * @type {typeof import('./worker.d.ts').openMemoryInWorker}
 */
export async function openMemoryInWorker(options = {}) {
  const { storage = { kind: 'memory' }, wasm, fixedTime, maxFileBytes, lifecycle, onLog, onOutput, onExternalChange, onProgress, llm, llmOptions, readOnly, maxMemoryBytes, callTimeoutMs, embeddings } = options;
  // The engine's embed import is synchronous, so the embedder must run in
  // the worker, beside the engine: the worker makes it from its options,
  // as functions cannot cross to a worker.
  if (embeddings !== undefined && (typeof embeddings !== 'object' || embeddings === null || typeof (/** @type {any} */ (embeddings)).embedSync === 'function')) {
    throw new ArborError('invalid_params', 'open: embeddings: in a worker, pass the options of openaiEmbeddings ({ provider, model, baseURL, apiKey, … }), not an embedder: the worker makes its own');
  }
  if (callTimeoutMs !== undefined && !(typeof callTimeoutMs === 'number' && callTimeoutMs > 0 && Number.isFinite(callTimeoutMs))) {
    throw new ArborError('invalid_params', `open: callTimeoutMs ${callTimeoutMs}: want a number of milliseconds above 0`);
  }
  /** @type {WorkerOpen} */
  const open = {
    storage,
    // A relative URL means the page's, not the worker's; in Node a bare
    // path is a file, relative to the process's folder, which its worker
    // threads share.
    wasm: wasm instanceof URL || (typeof wasm === 'string' && globalThis.location) ? new URL(wasm, globalThis.location?.href).href : wasm,
    fixedTime: fixedTime instanceof Date ? fixedTime.toISOString() : fixedTime,
    maxFileBytes,
    lifecycle,
    llmOptions,
    readOnly,
    maxMemoryBytes,
    embeddings,
    lockSlot: storage.kind === 'nodeFs' && callTimeoutMs !== undefined ? new SharedArrayBuffer(64) : undefined,
    forwardLogs: typeof onLog === 'function',
    forwardOutput: typeof onOutput === 'function',
    forwardExternalChanges: typeof onExternalChange === 'function',
    forwardProgress: typeof onProgress === 'function',
  };
  // The LLM adapter stays here: the worker hands pending results back, and
  // this thread makes the model calls (llm/drive.js), so the key never
  // goes to the worker and any adapter object works.
  const client = new WorkerMemory(open, { onLog, onOutput, onExternalChange, onProgress, llm, callTimeoutMs });
  client.opened = await client[start]();
  return client;
}

/** @implements {ArborMemory} */
class WorkerMemory extends MemoryMethods {
  /** @type {WorkerOpen} */
  #open;
  /** @type {OpenOptions['onLog']} */
  #onLog;
  /** @type {OpenOptions['onOutput']} */
  #onOutput;
  /** @type {OpenOptions['onExternalChange']} */
  #onExternalChange;
  /** @type {OpenOptions['onProgress']} */
  #onProgress;
  /** @type {number | undefined} */
  #timeoutMs;
  /**
   * The running worker; null before the first start, and after a deadline
   * ended it (the next call starts another).
   * @type {Running | null}
   */
  #current = null;
  #nextId = 1;
  /**
   * Requests go to the worker one at a time, so that a deadline measures
   * the call itself, not its wait behind others, and ending the worker
   * loses no call but the one that ran too long.
   * @type {Promise<unknown>}
   */
  #queue = Promise.resolve();
  /** @type {Promise<void> | null} */
  #closing = null;
  /** @type {ArborError | null} */
  #dead = null;

  /**
   * @param {WorkerOpen} open
   * @param {{ onLog: OpenOptions['onLog'], onOutput: OpenOptions['onOutput'], onExternalChange: OpenOptions['onExternalChange'], onProgress?: OpenOptions['onProgress'], llm: OpenOptions['llm'], callTimeoutMs: number | undefined }} options
   */
  constructor(open, { onLog, onOutput, onExternalChange, onProgress, llm, callTimeoutMs }) {
    super(llm);
    this.#open = open;
    this.#onLog = onLog;
    this.#onOutput = onOutput;
    this.#onExternalChange = onExternalChange;
    this.#onProgress = onProgress;
    this.#timeoutMs = callTimeoutMs;
    // Cast: undefined only until openMemoryInWorker sets it, before it hands
    // the memory out; callers always see an OpenResult.
    /** @type {OpenResult} */
    this.opened = /** @type {OpenResult} */ (/** @type {unknown} */ (undefined));
  }

  /**
   * Starts a worker and opens the memory in it (not bounded by the
   * deadline: it compiles the module and reads the whole tree).
   *
   * @returns {Promise<OpenResult>}
   */
  async [start]() {
    const worker = await spawn();
    /** @type {Running} */
    const current = { worker, pending: new Map() };
    this.#current = current;
    worker.onmessage = ({ data }) => {
      if (data?.log) {
        this.#onLog?.(data.log.level, data.log.message);
        return;
      }
      if (data?.output) {
        this.#onOutput?.(data.output.fd, data.output.line);
        return;
      }
      if (data?.progress) {
        try {
          this.#onProgress?.(data.progress);
        } catch (err) {
          console.error(err); // the callback's failure is not the memory's
        }
        return;
      }
      if (data?.externalChange) {
        try {
          this.#onExternalChange?.();
        } catch (err) {
          console.error(err); // as openMemory does: the callback's failure is not the memory's
        }
        return;
      }
      const p = current.pending.get(/** @type {number} */ (data?.id)); // cast: no id finds no call
      if (!p) return;
      current.pending.delete(/** @type {number} */ (data.id)); // cast: p was found by it
      if (data.error) p.reject(rebuild(data.error));
      else p.resolve(data.value);
    };
    // The worker script failed to load, or threw outside a request.
    worker.onerror = (ev) => {
      ev.preventDefault?.();
      this.#fail(current, new ArborError('crashed', `arbor worker: ${ev.message || 'the worker failed to start (is worker-entry.js served as JavaScript?)'}`));
    };
    worker.onmessageerror = () => this.#fail(current, new ArborError('crashed', 'arbor worker: a message could not be decoded'));
    try {
      return await this.#post(current, 'open', { options: this.#open });
    } catch (err) {
      this.#current = null;
      worker.terminate();
      throw err;
    }
  }

  /**
   * Ends the worker and rejects what was sent to it; the memory is dead.
   *
   * @param {Running} current
   * @param {ArborError} err
   */
  #fail(current, err) {
    if (this.#current === current) this.#dead = err;
    for (const p of current.pending.values()) p.reject(err);
    current.pending.clear();
    current.worker.terminate();
  }

  /**
   * Posts one request to a worker and resolves with its answer.
   *
   * @template [T=unknown] what the worker answers to `op` (worker-entry.js)
   * @param {Running} current
   * @param {keyof import('./worker-entry.js').Requests} op
   * @param {Record<string, unknown>} [args]
   * @param {Transferable[]} [transfer]
   * @returns {Promise<T>}
   */
  #post(current, op, args = {}, transfer = []) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // Cast: the worker answers `op` with a T (see @template).
      current.pending.set(id, { resolve: /** @type {(v: unknown) => void} */ (resolve), reject });
      try {
        current.worker.postMessage({ id, op, ...args }, transfer);
      } catch (err) {
        current.pending.delete(id);
        // Cast: postMessage throws a DataCloneError (a DOMException).
        reject(new ArborError('invalid_params', `${args.method ?? op}: cannot be sent to the worker: ${/** @type {Error} */ (err).message}`, { cause: err }));
      }
    });
  }

  /**
   * Queues one request for the worker, starting one first if a deadline
   * ended the last. A `call` past the deadline ends the worker: it rejects
   * with code `deadline`, and the next request runs in a new worker on the
   * saved tree.
   *
   * @template [T=unknown]
   * @param {'call' | 'exportFiles' | 'importFiles'} op
   * @param {Record<string, unknown>} [args]
   * @returns {Promise<T>}
   */
  send(op, args = {}) {
    const label = /** @type {string} */ (args.method ?? op);
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#closing) return Promise.reject(new ArborError('not_open', `${label}: the memory is closed`));
    const run = this.#queue.then(async () => {
      if (this.#dead) throw this.#dead;
      if (!this.#current) {
        try {
          await this[start]();
        } catch (err) {
          // Cast: start rejects with an ArborError or the worker's Error.
          throw new ArborError('crashed', `${label}: reopening the memory in a new worker failed: ${/** @type {Error} */ (err).message}`, { cause: err });
        }
      }
      const current = /** @type {Running} */ (this.#current);
      const answer = /** @type {Promise<T>} */ (this.#post(current, op, args));
      if (op !== 'call' || this.#timeoutMs === undefined) return answer;
      return this.#bounded(current, answer, label, this.#timeoutMs);
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * `answer`, or a `deadline` rejection after `ms`, when the worker is ended.
   *
   * @template T
   * @param {Running} current
   * @param {Promise<T>} answer
   * @param {string} label
   * @param {number} ms
   * @returns {Promise<T>}
   */
  #bounded(current, answer, label, ms) {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const expired = new Promise((_, reject) => {
      timer = setTimeout(() => {
        this.#current = null;
        // An in-memory tree dies with its worker; a saved one is reopened.
        const lost = (this.#open.storage?.kind ?? 'memory') === 'memory';
        const next = lost
          ? 'its tree, kept in the worker\'s memory (storage kind "memory"), is lost: open a new memory'
          : 'the memory reopens in a new worker at the next call, on the tree as last saved';
        const err = new ArborError('deadline', `${label}: stopped after ${ms} ms (callTimeoutMs): the worker running the engine was ended; ${next}`);
        if (lost) this.#dead = new ArborError('crashed', `the memory was lost with its worker, ended when ${label} ran past its deadline (storage kind "memory"): open a new memory`);
        for (const p of current.pending.values()) p.reject(err);
        current.pending.clear();
        current.worker.terminate();
        this.#releaseLock().finally(() => reject(err));
      }, ms);
    });
    return Promise.race([answer, expired]).finally(() => clearTimeout(timer));
  }

  /**
   * Releases the root's lock that an ended worker held, if it held one: it
   * can no longer, and its process, alive, keeps the lock from turning
   * stale for minutes (storage/rootlock.js). A worker ended in the instant
   * between taking the lock and noting its token leaves it to turn stale.
   */
  async #releaseLock() {
    const { lockSlot, storage } = this.#open;
    if (!lockSlot || storage?.kind !== 'nodeFs') return;
    const slot = new Uint8Array(lockSlot);
    const n = Atomics.load(slot, 0);
    if (n === 0) return;
    const token = new TextDecoder().decode(slot.slice(1, 1 + n));
    Atomics.store(slot, 0, 0);
    try {
      const { releaseAbandoned } = await import('./storage/rootlock.js');
      releaseAbandoned(storage.dir, token);
    } catch (err) {
      this.#onLog?.('error', `releasing the root's lock of the ended worker: ${/** @type {Error} */ (err).message}`);
    }
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
    this.#closing ??= this.#queue.then(async () => {
      const current = this.#current;
      this.#current = null;
      if (!current) return;
      try {
        if (!this.#dead) await this.#post(current, 'close');
      } finally {
        current.worker.terminate();
      }
    });
    return this.#closing;
  }
}

// Cast: as for Memory in index.js, the method exists only where the symbol does.
if (typeof Symbol.asyncDispose === 'symbol') /** @type {WorkerMemory & AsyncDisposable} */ (WorkerMemory.prototype)[Symbol.asyncDispose] = WorkerMemory.prototype.close;

/**
 * Starts worker-entry.js: a module Web Worker where there is one, else (in
 * Node, which has no Web Workers) a worker_threads Worker.
 *
 * @returns {Promise<WorkerLike>}
 */
async function spawn() {
  const url = new URL('./worker-entry.js', import.meta.url);
  // Cast: a Web Worker calls the handlers with whole events, of which
  // WorkerLike's handlers read only what they declare.
  if (typeof Worker === 'function') return /** @type {WorkerLike} */ (/** @type {unknown} */ (new Worker(url, { type: 'module', name: 'arbor' })));
  const { Worker: NodeThread } = await import('node:worker_threads');
  return new NodeWorker(new NodeThread(url, { name: 'arbor' }));
}

/** A worker_threads Worker behind the part of the Web Worker API used here. */
class NodeWorker {
  /** @type {WorkerLike['onmessage']} */
  onmessage = null;
  /** @type {WorkerLike['onerror']} */
  onerror = null;
  /** @type {WorkerLike['onmessageerror']} */
  onmessageerror = null;
  #ended = false;

  /** @param {import('node:worker_threads').Worker} thread */
  constructor(thread) {
    this.thread = thread;
    thread.on('message', (data) => this.onmessage?.({ data }));
    thread.on('error', (err) => this.onerror?.({ message: err.message }));
    thread.on('messageerror', () => this.onmessageerror?.());
    // A thread that ends on its own (out of memory, process.exit) fails
    // what was sent to it, as a Web Worker's error event would.
    thread.on('exit', (code) => {
      if (!this.#ended) this.onerror?.({ message: `the worker thread exited with code ${code}` });
    });
  }

  /**
   * @param {unknown} message
   * @param {Transferable[]} [transfer]
   */
  postMessage(message, transfer = []) {
    // Cast: the transferables this package sends (ArrayBuffers) are Node's too.
    this.thread.postMessage(message, /** @type {import('node:worker_threads').TransferListItem[]} */ (/** @type {unknown} */ (transfer)));
  }

  terminate() {
    this.#ended = true;
    void this.thread.terminate();
  }
}

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
