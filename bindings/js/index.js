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
 * Opens a memory: compiles and starts the engine, then reads the tree
 * from `storage`.
 *
 * @param {import('./index.d.ts').OpenOptions} [options]
 * @returns {Promise<import('./index.d.ts').ArborMemory>}
 */
export async function openMemory(options = {}) {
  const { storage = memory(), wasm, fixedTime, maxFileBytes, onLog = defaultLog, onOutput } = options;
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
  const mem = new Memory(instance, wasi);
  const params = {};
  if (fixedTime !== undefined) params.fixedTime = fixedTime instanceof Date ? fixedTime.toISOString() : fixedTime;
  if (maxFileBytes !== undefined) params.maxFileBytes = maxFileBytes;
  mem.opened = await mem.call('open', params);
  return mem;
}

/** One open memory root; see index.d.ts for the documentation of each method. */
class Memory {
  #exports;
  #wasi;
  /** Calls run one at a time, in order (the ABI is strictly sequential). */
  #queue = Promise.resolve();
  #nextId = 1;
  /** @type {'open' | 'closed' | 'crashed'} */
  #state = 'open';

  constructor(instance, wasi) {
    this.#exports = instance.exports;
    this.#wasi = wasi;
    /** @type {import('./index.d.ts').OpenResult | undefined} */
    this.opened = undefined;
  }

  call(method, params = {}) {
    let request;
    try {
      // Serialized now, so that changing the arguments after the call
      // cannot change what a queued call sends.
      request = encoder.encode(JSON.stringify({ id: this.#nextId++, method, params }));
    } catch (err) {
      return Promise.reject(new ArborError('invalid_params', `${method}: params cannot be sent as JSON: ${err.message}`, { cause: err }));
    }
    const run = this.#queue.then(() => this.#send(method, request));
    this.#queue = run.catch(() => {});
    return run;
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

  close() {
    const run = this.#queue.then(() => {
      if (this.#state !== 'open') return;
      try {
        this.#send('close', encoder.encode(JSON.stringify({ id: this.#nextId++, method: 'close', params: {} })));
      } finally {
        this.#state = 'closed';
        this.#exports = null; // lets the instance and its memory be collected
        this.#wasi.flush();
      }
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /** One request through arbor_call (docs/ABI.md §5, step 3). */
  #send(method, request) {
    if (this.#state === 'closed') throw new ArborError('not_open', `${method}: the memory is closed`);
    if (this.#state === 'crashed') throw new ArborError('crashed', `${method}: the module crashed earlier; open the memory again`);
    const ex = this.#exports;
    let response;
    try {
      const ptr = ex.arbor_alloc(request.length);
      // arbor_alloc may have grown memory: take the buffer only now.
      new Uint8Array(ex.memory.buffer, ptr, request.length).set(request);
      const packed = BigInt.asUintN(64, ex.arbor_call(ptr, request.length));
      ex.arbor_free(ptr);
      const outPtr = Number(packed >> 32n);
      const outLen = Number(packed & 0xffffffffn);
      response = new Uint8Array(ex.memory.buffer, outPtr, outLen).slice();
      ex.arbor_free(outPtr);
    } catch (err) {
      // A trap or proc_exit leaves the Go runtime in an unknown state.
      this.#state = 'crashed';
      this.#wasi.flush();
      throw new ArborError('crashed', `${method}: the wasm module failed: ${err.message}`, { cause: err });
    }
    let msg;
    try {
      msg = JSON.parse(decoder.decode(response));
    } catch (err) {
      throw new ArborError('internal', `${method}: the module answered invalid JSON`, { cause: err });
    }
    if (msg.error) throw new ArborError(msg.error.code, msg.error.message);
    return msg.result;
  }
}

if (typeof Symbol.asyncDispose === 'symbol') {
  // `await using mem = await openMemory(…)` closes the memory at scope exit.
  Memory.prototype[Symbol.asyncDispose] = Memory.prototype.close;
}
