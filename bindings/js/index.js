// Arbor for JavaScript: opens a memory root on a storage adapter by
// running the engine's WebAssembly module (docs/ABI.md) and exposes its
// methods as promises. This file loads in Node, pages and workers; the
// Node entry (index.node.js) adds the nodeFs adapter.

import { ArborHost } from './abi.js';
import { ArborError } from './error.js';
import { compileArbor } from './load.js';
import { memory } from './storage/memory.js';
import { WASI } from './wasi.js';

export { ArborError } from './error.js';
export { StorageError } from './storage/errors.js';
export { compileArbor } from './load.js';
export { memory } from './storage/memory.js';

/** The version of docs/ABI.md these bindings speak. */
export const ABI_VERSION = 1;

/**
 * Stands in for the Node adapter where there is no file system; Node
 * resolves the package to index.node.js, which exports the real one.
 *
 * @returns {never}
 */
export function nodeFs() {
  throw new Error('arbor: nodeFs needs Node.js; in a browser use memory() or another storage adapter');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Logs the engine's errors; its other lines are dropped by default. */
function defaultLog(level, message) {
  if (level === 'error') console.error(`arbor: ${message}`);
}

/**
 * Starts the engine on `storage` without opening it: the raw protocol of
 * docs/ABI.md §3, for hosts and conformance tests. `openMemory` is built
 * on it.
 *
 * @param {import('./index.d.ts').EngineOptions} [options]
 * @returns {Promise<import('./index.d.ts').ArborEngine>}
 */
export async function startEngine(options = {}) {
  const { storage = memory(), wasm, onLog = defaultLog, onOutput } = options;
  const module = await compileArbor(wasm);
  const wasi = new WASI({ onOutput });
  const host = new ArborHost({ storage, onLog });
  const instance = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi.imports(module),
    arbor_host: host.imports,
  });
  host.bind(instance);
  try {
    wasi.initialize(instance);
  } catch (err) {
    wasi.flush();
    throw new ArborError('crashed', `arbor: the module failed to start: ${err.message}`, { cause: err });
  }
  const version = instance.exports.arbor_abi_version?.();
  if (version !== ABI_VERSION) {
    throw new ArborError('abi_version', `arbor: the module speaks ABI version ${version}, these bindings speak ${ABI_VERSION}`);
  }
  return new Engine(instance, wasi);
}

/** Engine methods for Memory only (a symbol this module does not export). */
const send = Symbol('send');
const finish = Symbol('finish');

/** One running module instance; see ArborEngine in index.d.ts. */
class Engine {
  #exports;
  #wasi;
  /** Calls run one at a time, in order (the ABI is strictly sequential). */
  #queue = Promise.resolve();
  /** @type {'running' | 'disposed' | 'crashed'} */
  #state = 'running';

  constructor(instance, wasi) {
    this.#exports = instance.exports;
    this.#wasi = wasi;
  }

  request(envelope) {
    let bytes;
    if (typeof envelope === 'string') bytes = encoder.encode(envelope);
    else if (envelope instanceof Uint8Array) bytes = envelope.slice();
    else return Promise.reject(new TypeError('arbor: a request is a JSON string or its UTF-8 bytes'));
    return this[send](bytes, 'request').then((out) => decoder.decode(out));
  }

  dispose() {
    return this[finish](null, 'dispose').then(() => {});
  }

  /** Queues one request; resolves with the response's bytes. `label` names the call in errors. */
  [send](bytes, label) {
    return this.#enqueue(() => this.#call(bytes, label));
  }

  /**
   * Queues the last request: sends `bytes` (unless null) if the engine is
   * still running, then releases the instance. Resolves with the
   * response's bytes, or null when nothing was sent.
   */
  [finish](bytes, label) {
    return this.#enqueue(() => {
      if (this.#state !== 'running') {
        this.#state = 'disposed';
        return null;
      }
      try {
        return bytes === null ? null : this.#call(bytes, label);
      } finally {
        this.#state = 'disposed';
        this.#exports = null; // lets the instance and its memory be collected
        this.#wasi.flush();
      }
    });
  }

  #enqueue(fn) {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** One request through arbor_call (docs/ABI.md §5, step 3). */
  #call(request, label) {
    if (this.#state === 'disposed') throw new ArborError('not_open', `${label}: the memory is closed`);
    if (this.#state === 'crashed') throw new ArborError('crashed', `${label}: the module crashed earlier; open the memory again`);
    const ex = this.#exports;
    try {
      const ptr = ex.arbor_alloc(request.length);
      // arbor_alloc may have grown memory: take the buffer only now.
      new Uint8Array(ex.memory.buffer, ptr, request.length).set(request);
      const packed = BigInt.asUintN(64, ex.arbor_call(ptr, request.length));
      ex.arbor_free(ptr);
      const outPtr = Number(packed >> 32n);
      const outLen = Number(packed & 0xffffffffn);
      const response = new Uint8Array(ex.memory.buffer, outPtr, outLen).slice();
      ex.arbor_free(outPtr);
      return response;
    } catch (err) {
      // A trap or proc_exit leaves the Go runtime in an unknown state.
      this.#state = 'crashed';
      this.#exports = null;
      this.#wasi.flush();
      throw new ArborError('crashed', `${label}: the wasm module failed: ${err.message}`, { cause: err });
    }
  }
}

/**
 * Opens a memory: compiles and starts the engine, then reads the tree
 * from `storage`.
 *
 * @param {import('./index.d.ts').OpenOptions} [options]
 * @returns {Promise<import('./index.d.ts').ArborMemory>}
 */
export async function openMemory(options = {}) {
  const { fixedTime, maxFileBytes, lifecycle } = options;
  const params = {};
  if (fixedTime instanceof Date) {
    if (Number.isNaN(fixedTime.getTime())) throw new ArborError('invalid_params', 'open: fixedTime is an invalid Date');
    params.fixedTime = fixedTime.toISOString();
  } else if (fixedTime !== undefined) {
    params.fixedTime = fixedTime;
  }
  if (maxFileBytes !== undefined) params.maxFileBytes = maxFileBytes;
  if (lifecycle !== undefined) params.lifecycle = lifecycle;
  const engine = await startEngine(options);
  const mem = new Memory(engine);
  try {
    mem.opened = await mem.call('open', params);
  } catch (err) {
    await engine.dispose();
    throw err;
  }
  return mem;
}

/** One open memory root; see ArborMemory in index.d.ts for each method. */
class Memory {
  #engine;
  #nextId = 1;
  /** @type {Promise<void> | null} */
  #closing = null;

  constructor(engine) {
    this.#engine = engine;
    /** @type {import('./index.d.ts').OpenResult | undefined} */
    this.opened = undefined;
  }

  async call(method, params = {}) {
    if (typeof method !== 'string') {
      throw new ArborError('invalid_request', `call: the method must be a string, not ${typeof method}`);
    }
    let request;
    try {
      // Serialized now, so that changing the arguments after the call
      // cannot change what a queued call sends.
      request = encoder.encode(JSON.stringify({ id: this.#nextId++, method, params }));
    } catch (err) {
      throw new ArborError('invalid_params', `${method}: params cannot be sent as JSON: ${err.message}`, { cause: err });
    }
    return result(method, await this.#engine[send](request, method));
  }

  curate(operations) {
    return this.call('curate', { operations: Array.isArray(operations) ? operations : [operations] });
  }

  search(query, { limit } = {}) {
    return this.call('search', { query, limit });
  }

  query(query, { limit } = {}) {
    return this.call('query', { query, limit });
  }

  read(path) {
    return this.call('read', { path });
  }

  tree({ path, depth } = {}) {
    return this.call('tree', { path, depth });
  }

  stats() {
    return this.call('stats');
  }

  flush() {
    return this.call('flush');
  }

  close() {
    this.#closing ??= (async () => {
      const request = encoder.encode(JSON.stringify({ id: this.#nextId++, method: 'close', params: {} }));
      const response = await this.#engine[finish](request, 'close');
      if (response !== null) result('close', response);
    })();
    return this.#closing;
  }
}

/** The `result` of a response envelope, or its `error` thrown as an ArborError. */
function result(method, bytes) {
  let msg;
  try {
    msg = JSON.parse(decoder.decode(bytes));
  } catch (err) {
    throw new ArborError('internal', `${method}: the module answered invalid JSON`, { cause: err });
  }
  if (msg?.error) {
    const { code = 'internal', message = 'unknown error' } = msg.error;
    throw new ArborError(code, message);
  }
  return msg?.result;
}

if (typeof Symbol.asyncDispose === 'symbol') {
  // `await using mem = await openMemory(…)` closes the memory at scope exit.
  Memory.prototype[Symbol.asyncDispose] = Memory.prototype.close;
  Engine.prototype[Symbol.asyncDispose] = Engine.prototype.dispose;
}
