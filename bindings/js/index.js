// Arbor for JavaScript: opens a memory root on a storage adapter by
// running the engine's WebAssembly module (docs/ABI.md) and exposes its
// methods as promises. This file loads in Node, pages and workers; the
// Node entry (index.node.js) adds the nodeFs adapter.

import { ArborHost } from './abi.js';
import { ArborError } from './error.js';
import { MemoryMethods } from './methods.js';
import { compileArbor } from './load.js';
import { memory } from './storage/memory.js';
import { WASI, defaultOutput } from './wasi.js';
import { importInto, treeFiles } from './files.js';
import { goMemLimit, grantReadOnly, isOutOfMemory, memoryPages, mib } from './sandbox.js';

export { ArborError } from './error.js';
export { StorageError } from './storage/errors.js';
export { compileArbor } from './load.js';
export { memory } from './storage/memory.js';
export { indexedDB, deleteIndexedDB } from './storage/indexeddb.js';
export { openaiCompatible, anthropic, adapterFromEnv, LLMError, PROVIDERS } from './llm/index.js';
export { openaiEmbeddings, embeddingsFromEnv } from './embed/index.js';

// Each export below is typed with its declaration in index.d.ts (`@type`,
// `@implements`), so that `npm run typecheck` fails when the two disagree.

/** @typedef {import('./index.d.ts').ArborMemory} ArborMemory */
/** @typedef {import('./index.d.ts').ArborEngine} ArborEngine */
/** @typedef {import('./index.d.ts').OpenOptions} OpenOptions */
/** @typedef {import('./index.d.ts').OpenResult} OpenResult */
/** @typedef {import('./index.d.ts').LogLevel} LogLevel */
/** @typedef {import('./index.d.ts').Storage} Storage */

/**
 * What Memory keeps of openMemory's options: the storage is settled.
 * @typedef {OpenOptions & { storage: Storage }} MemoryOptions
 */

/**
 * The exports of the engine module (docs/ABI.md §1) that the bindings call.
 *
 * @typedef {object} ArborExports
 * @property {WebAssembly.Memory} memory
 * @property {(size: number) => number} arbor_alloc
 * @property {(ptr: number) => void} arbor_free
 * @property {(ptr: number, len: number) => bigint} arbor_call
 * @property {() => number} [arbor_abi_version]
 */

/**
 * The version of docs/ABI.md these bindings speak.
 * @type {typeof import('./index.d.ts').ABI_VERSION}
 */
export const ABI_VERSION = 8;

/**
 * The package's release. It is written here, not read from package.json,
 * so that pages and workers need no JSON import; a test keeps the two equal.
 * @type {typeof import('./index.d.ts').version}
 */
export const version = '0.1.0';

/**
 * Stands in for the Node adapter where there is no file system; Node
 * resolves the package to index.node.js, which exports the real one.
 *
 * @type {typeof import('./storage/node.d.ts').nodeFs}
 */
export function nodeFs() {
  throw new Error('arbor: nodeFs needs Node.js; in a browser use memory() or another storage adapter');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Logs the engine's errors; its other lines are dropped by default.
 *
 * @param {LogLevel} level
 * @param {string} message
 */
function defaultLog(level, message) {
  if (level === 'error') console.error(`arbor: ${message}`);
}

/**
 * Starts the engine on `storage` without opening it: the raw protocol of
 * docs/ABI.md §3, for hosts and conformance tests. `openMemory` is built
 * on it (and uses the Engine's symbol-keyed methods, which the declared
 * ArborEngine hides).
 *
 * @type {typeof import('./index.d.ts').startEngine}
 */
export async function startEngine(options = {}) {
  const { storage = memory(), wasm, onLog = defaultLog, onOutput = defaultOutput, onProgress, readOnly = false, maxMemoryBytes, embeddings } = options;
  const pages = maxMemoryBytes === undefined ? 0 : memoryPages(maxMemoryBytes);
  // An asynchronous store (indexedDB) brings its tree into memory first:
  // the engine's imports are synchronous.
  const [module] = await Promise.all([compileArbor(wasm, pages ? { maxMemoryBytes } : {}), storage?.load?.()]);
  const stop = { outOfMemory: false, cap: pages ? mib(pages) : '' };
  const wasi = new WASI({
    env: pages ? { GOMEMLIMIT: goMemLimit(pages) } : {},
    onOutput: (fd, line) => {
      if (fd === 2 && isOutOfMemory(line)) stop.outOfMemory = true;
      onOutput(fd, line);
    },
  });
  const host = new ArborHost({ storage, onLog, onProgress, readOnly, embeddings });
  const instance = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi.imports(module),
    arbor_host: host.imports,
  });
  host.bind(instance);
  try {
    wasi.initialize(instance);
  } catch (err) {
    wasi.flush();
    // Cast: a trap (WebAssembly.RuntimeError) or WASIExit.
    throw new ArborError('crashed', `arbor: the module failed to start: ${/** @type {Error} */ (err).message}`, { cause: err });
  }
  // Cast: the module's exports are untyped; docs/ABI.md §1 lists them.
  const version = /** @type {ArborExports} */ (instance.exports).arbor_abi_version?.();
  if (version !== ABI_VERSION) {
    throw new ArborError('abi_version', `arbor: the module speaks ABI version ${version}, these bindings speak ${ABI_VERSION}`);
  }
  return new Engine(instance, wasi, { readOnly, stop });
}

/** Engine methods for Memory only (a symbol this module does not export). */
const send = Symbol('send');
const finish = Symbol('finish');

/**
 * One running module instance; see ArborEngine in index.d.ts.
 *
 * @implements {ArborEngine}
 */
class Engine {
  /** @type {ArborExports | null} */
  #exports;
  /** @type {WASI} */
  #wasi;
  /**
   * Calls run one at a time, in order (the ABI is strictly sequential).
   * @type {Promise<unknown>}
   */
  #queue = Promise.resolve();
  /** @type {'running' | 'disposed' | 'crashed'} */
  #state = 'running';
  /** The read-only grant: every open is sent with `readOnly: true`. */
  #readOnly;
  /** Set by the module's output when it runs out of memory; the cap, for messages. */
  #stop;

  /**
   * @param {WebAssembly.Instance} instance
   * @param {WASI} wasi
   * @param {{ readOnly: boolean, stop: { outOfMemory: boolean, cap: string } }} sandbox
   */
  constructor(instance, wasi, { readOnly, stop }) {
    // Cast: the module's exports are untyped; docs/ABI.md §1 lists them.
    this.#exports = /** @type {ArborExports} */ (instance.exports);
    this.#wasi = wasi;
    this.#readOnly = readOnly;
    this.#stop = stop;
  }

  /** @type {ArborEngine['request']} */
  request(envelope) {
    let bytes;
    if (typeof envelope === 'string') bytes = encoder.encode(envelope);
    else if (envelope instanceof Uint8Array) bytes = envelope.slice();
    else return Promise.reject(new TypeError('arbor: a request is a JSON string or its UTF-8 bytes'));
    if (this.#readOnly) bytes = grantReadOnly(bytes);
    return this[send](bytes, 'request').then((out) => decoder.decode(out));
  }

  /** @type {ArborEngine['dispose']} */
  dispose() {
    return this[finish](null, 'dispose').then(() => {});
  }

  /**
   * Queues one request; resolves with the response's bytes. `label` names the call in errors.
   *
   * @param {Uint8Array} bytes
   * @param {string} label
   * @returns {Promise<Uint8Array>}
   */
  [send](bytes, label) {
    return this.#enqueue(() => this.#call(bytes, label));
  }

  /**
   * Queues the last request: sends `bytes` (unless null) if the engine is
   * still running, then releases the instance. Resolves with the
   * response's bytes, or null when nothing was sent.
   *
   * @param {Uint8Array | null} bytes
   * @param {string} label
   * @returns {Promise<Uint8Array | null>}
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

  /**
   * @template T
   * @param {() => T | PromiseLike<T>} fn
   * @returns {Promise<T>}
   */
  #enqueue(fn) {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * One request through arbor_call (docs/ABI.md §5, step 3).
   *
   * @param {Uint8Array} request
   * @param {string} label
   * @returns {Uint8Array}
   */
  #call(request, label) {
    if (this.#state === 'disposed') throw new ArborError('not_open', `${label}: the memory is closed`);
    if (this.#state === 'crashed') throw new ArborError('crashed', `${label}: the module crashed earlier; open the memory again`);
    // Cast: the exports are dropped only when the state leaves 'running', checked above.
    const ex = /** @type {ArborExports} */ (this.#exports);
    try {
      const ptr = ex.arbor_alloc(request.length) >>> 0; // an i32 comes signed: past 2 GiB, negative
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
      if (this.#stop.outOfMemory) {
        throw new ArborError('memory_limit', `${label}: stopped: the engine needed more memory than its cap of ${this.#stop.cap} (maxMemoryBytes)`, { cause: err });
      }
      // Cast: a trap (WebAssembly.RuntimeError), WASIExit or a RangeError.
      throw new ArborError('crashed', `${label}: the wasm module failed: ${/** @type {Error} */ (err).message}`, { cause: err });
    }
  }
}

/**
 * Opens a memory: compiles and starts the engine, then reads the tree
 * from `storage`.
 *
 * @type {typeof import('./index.d.ts').openMemory}
 */
export async function openMemory(options = {}) {
  const { fixedTime, maxFileBytes, lifecycle, llmOptions, readOnly } = options;
  if ('callTimeoutMs' in options) {
    throw new ArborError('invalid_params', 'open: callTimeoutMs needs openMemoryInWorker: a call on the thread that runs the engine cannot be interrupted');
  }
  /** @type {Record<string, unknown>} open's params (docs/ABI.md §4.1) */
  const params = {};
  if (readOnly) params.readOnly = true;
  if (fixedTime instanceof Date) {
    if (Number.isNaN(fixedTime.getTime())) throw new ArborError('invalid_params', 'open: fixedTime is an invalid Date');
    params.fixedTime = fixedTime.toISOString();
  } else if (fixedTime !== undefined) {
    params.fixedTime = fixedTime;
  }
  if (maxFileBytes !== undefined) params.maxFileBytes = maxFileBytes;
  if (lifecycle !== undefined) params.lifecycle = lifecycle;
  if (llmOptions !== undefined) params.llm = llmOptions;
  const mem = new Memory({ ...options, storage: options.storage ?? memory() }, params);
  await mem[open]();
  return mem;
}

const open = Symbol('open');

/**
 * One open memory root; see ArborMemory in index.d.ts for each method.
 *
 * @implements {ArborMemory}
 */
class Memory extends MemoryMethods {
  /** @type {Engine | null} */
  #engine = null;
  /** @type {MemoryOptions} */
  #options;
  /** @type {Record<string, unknown>} */
  #openParams;
  #nextId = 1;
  /**
   * Calls run one at a time, each with the saving of what it changed, so
   * that a save that fails can be undone before the next call runs.
   * @type {Promise<unknown>}
   */
  #queue = Promise.resolve();
  /** @type {Promise<void> | null} */
  #closing = null;
  /** Stops hearing about other memories' changes to the storage. */
  #unwatch = () => {};
  /** Stops hearing about files others change in the storage (an editor, another process). */
  #unfollow = () => {};
  /** Paths others changed since the last call, read again before the next. */
  #changed = new Set();
  /** Changes may have been missed: the next call scans the whole tree first. */
  #rescan = false;
  /** The storage reports the files others change (#follow). */
  #following = false;
  /** Where the storage cannot report changes, scan at most this often (ms); 0: never. */
  #scanEvery = 0;
  #lastScan = 0;
  /** A reload for another memory's change is queued and has not run yet. */
  #syncQueued = false;

  /**
   * @param {MemoryOptions} options
   * @param {Record<string, unknown>} openParams
   */
  constructor(options, openParams) {
    super(options.llm);
    this.#options = options;
    this.#openParams = openParams;
    // Cast: undefined only until [open]() sets it, before openMemory hands
    // the memory out; callers always see an OpenResult.
    /** @type {OpenResult} */
    this.opened = /** @type {OpenResult} */ (/** @type {unknown} */ (undefined));
  }

  /** Opens the memory, then listens for other memories' saves to the same storage. */
  async [open]() {
    // Followed from before the tree is read: nothing changed after open
    // read a file goes unseen.
    this.#follow();
    await this.#exclusive('open', () => this.#start());
    const { storage } = this.#options;
    if (typeof storage.watch === 'function') this.#unwatch = storage.watch(() => this.#sync());
  }

  /**
   * Hears of the files others change in the storage, for storages that
   * report them (a folder: `nodeFs`), unless `watch: false`. Where the
   * storage cannot watch, the tree is scanned before a call instead, at
   * most every two seconds.
   */
  #follow() {
    const { storage, watch } = this.#options;
    if (watch === false || typeof storage.changes !== 'function') return;
    try {
      this.#unfollow = storage.changes(
        (paths) => {
          if (paths === null) this.#rescan = true;
          else for (const p of paths) this.#changed.add(p);
        },
        (message) => (this.#options.onLog ?? defaultLog)('warn', message),
      );
      this.#following = true;
    } catch (err) {
      this.#scanEvery = 2000;
      (this.#options.onLog ?? defaultLog)('warn', `watching the storage failed; it is scanned for changes instead: ${/** @type {Error} */ (err).message}`);
    }
  }

  /**
   * Before a call: has the engine read again what others changed since
   * the last one (the refresh method, docs/ABI.md §4.12). A failure is
   * logged; the call still runs, and the next one scans.
   *
   * @param {string} method
   */
  async #catchUp(method) {
    if (method === 'refresh' || method === 'close' || !this.#engine) return;
    // A watcher hears of a change on the event loop's next turn (Node reads
    // the file system's events there): a save made just before this call
    // (a person saves, an agent asks at once) is taken in first, not
    // answered from the text before it.
    if (this.#following) await new Promise((r) => (globalThis.setImmediate ?? setTimeout)(r));
    if (this.#scanEvery > 0 && Date.now() - this.#lastScan >= this.#scanEvery) this.#rescan = true;
    if (!this.#rescan && this.#changed.size === 0) return;
    const params = this.#rescan ? {} : { paths: [...this.#changed] };
    if (this.#rescan) this.#lastScan = Date.now();
    this.#changed.clear();
    this.#rescan = false;
    try {
      result('refresh', await this.#send('refresh', this.#envelope('refresh', params)));
    } catch (err) {
      this.#rescan = true;
      (this.#options.onLog ?? defaultLog)('warn', `reading what changed on disk failed: ${/** @type {Error} */ (err).message}`);
    }
  }

  /** Starts an engine and opens the tree; on failure nothing stays running. */
  async #start() {
    // Cast: startEngine makes an Engine; its declared type hides [send].
    const engine = /** @type {Engine} */ (await startEngine(this.#options));
    try {
      this.opened = result('open', await engine[send](this.#envelope('open', this.#openParams), 'open'));
      await this.#options.storage.commit?.();
    } catch (err) {
      await engine.dispose();
      throw err;
    }
    this.#engine = engine;
  }

  /**
   * @param {string} method
   * @param {unknown} params
   */
  #envelope(method, params) {
    return encoder.encode(JSON.stringify({ id: this.#nextId++, method, params }));
  }

  /**
   * Runs fn after the queued calls.
   *
   * @template T
   * @param {() => T | PromiseLike<T>} fn
   * @returns {Promise<T>}
   */
  #enqueue(fn) {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Saves what the last call changed (storages with `commit`). When the
   * save fails, the storage is back at its saved state and the engine is
   * restarted on it, so nothing unsaved stays visible.
   *
   * @param {string} method
   */
  async #save(method) {
    const { storage } = this.#options;
    if (typeof storage.commit !== 'function') return;
    try {
      await storage.commit();
    } catch (err) {
      await this.#restart(method);
      // Cast: a storage's commit rejects with an Error (StorageError).
      throw new ArborError('io', `${method}: not saved, the memory is back at its last saved state: ${/** @type {Error} */ (err).message}`, { cause: err });
    }
  }

  /** @param {string} label */
  async #restart(label) {
    const old = this.#engine;
    this.#engine = null;
    await old?.dispose();
    try {
      await this.#start();
    } catch (err) {
      // Cast: #start fails with an ArborError, or a storage's or the loader's Error.
      throw new ArborError('crashed', `${label}: reopening the memory failed: ${/** @type {Error} */ (err).message}`, { cause: err });
    }
  }

  /**
   * Runs fn holding the storage's lock, when it has one (a storage shared
   * with other tabs or workers). If another memory saved changes since this
   * one last looked, the storage has reloaded them, and the engine reads
   * the changed files again before the next call (or, when the storage
   * does not say which changed, restarts on them; not when `restart` is
   * false), so that no call runs on, or saves over, an older tree.
   *
   * @template T
   * @param {string} label
   * @param {(reloaded: boolean) => T | PromiseLike<T>} fn
   * @param {{ restart?: boolean }} [options]
   * @returns {T | PromiseLike<T>}
   */
  #exclusive(label, fn, { restart = true } = {}) {
    const { storage } = this.#options;
    if (typeof storage.exclusive !== 'function') return fn(false);
    return storage.exclusive(async (reloaded, changed) => {
      if (reloaded && restart && this.#engine) {
        // A storage that says what changed gets only that read again
        // (refresh, before the next call); otherwise a restart reads all.
        if (Array.isArray(changed)) for (const p of changed) this.#changed.add(p);
        else await this.#restart(label);
        this.#announce();
      }
      return fn(reloaded);
    });
  }

  /** Brings the memory up to date after another memory's save, while it is idle. */
  #sync() {
    if (this.#syncQueued || this.#closing) return;
    this.#syncQueued = true;
    this.#enqueue(() => {
      this.#syncQueued = false;
      if (this.#closing) return;
      return this.#exclusive('sync', () => {});
      // Cast: a failed restart rejects with an ArborError.
    }).catch((err) => (this.#options.onLog ?? defaultLog)('error', `reloading after another memory's save failed: ${/** @type {Error} */ (err).message}`));
  }

  /** Tells the caller that the memory now shows another memory's changes. */
  #announce() {
    const { onExternalChange } = this.#options;
    if (typeof onExternalChange !== 'function') return;
    // Not awaited and outside the lock: the callback may call the memory.
    queueMicrotask(() => {
      try {
        onExternalChange();
      } catch (err) {
        console.error(err);
      }
    });
  }

  /**
   * The running engine; after one stopped (a trap, the memory cap) or
   * failed to restart, a new one is started on the storage first.
   *
   * @param {string} method
   * @returns {Promise<Engine>}
   */
  async #running(method) {
    if (this.#engine) return this.#engine;
    if (this.#closing) throw new ArborError('not_open', `${method}: the memory is closed`);
    try {
      await this.#start();
    } catch (err) {
      // Cast: #start fails with an ArborError, or a storage's or the loader's Error.
      throw new ArborError('crashed', `${method}: reopening the memory failed: ${/** @type {Error} */ (err).message}`, { cause: err });
    }
    // Cast: #start sets the engine or throws.
    return /** @type {Engine} */ (/** @type {unknown} */ (this.#engine));
  }

  /**
   * Sends one request to the running engine. When the module stops during
   * it, what the call wrote is saved (each file is whole, as on a disk),
   * the engine is dropped, and the next call starts a new one.
   *
   * @param {string} method
   * @param {Uint8Array} request
   * @returns {Promise<Uint8Array>}
   */
  async #send(method, request) {
    const engine = await this.#running(method);
    try {
      return await engine[send](request, method);
    } catch (err) {
      this.#engine = null;
      const { storage } = this.#options;
      try {
        // The root's lock, if the call held it for a write, is released
        // for the next engine and for other processes.
        storage.unlock?.();
      } catch (uerr) {
        (this.#options.onLog ?? defaultLog)('error', `releasing the root's lock after the engine stopped: ${/** @type {Error} */ (uerr).message}`);
      }
      try {
        await storage.commit?.();
      } catch {
        // the storage is back at its last saved state, which is as good
      }
      // Cast: [send] rejects with the ArborError of a module that stopped.
      const { code, message } = /** @type {ArborError} */ (err);
      throw new ArborError(code, `${message}; the memory reopens at the next call`, { cause: err });
    }
  }

  /** @type {ArborMemory['call']} */
  async call(method, params = {}) {
    if (typeof method !== 'string') {
      throw new ArborError('invalid_request', `call: the method must be a string, not ${typeof method}`);
    }
    let request;
    try {
      // Serialized now, so that changing the arguments after the call
      // cannot change what a queued call sends.
      request = this.#envelope(method, params);
    } catch (err) {
      // Cast: JSON.stringify throws a TypeError (a cycle, a BigInt).
      throw new ArborError('invalid_params', `${method}: params cannot be sent as JSON: ${/** @type {Error} */ (err).message}`, { cause: err });
    }
    return this.#enqueue(() =>
      this.#exclusive(method, async () => {
        await this.#catchUp(method);
        const bytes = await this.#send(method, request);
        await this.#save(method);
        return result(method, bytes);
      }),
    );
  }

  /** @type {ArborMemory['exportFiles']} */
  exportFiles() {
    return this.#enqueue(() =>
      this.#exclusive('exportFiles', async () => {
        await this.#running('exportFiles');
        return treeFiles(this.#options.storage);
      }),
    );
  }

  /** @type {ArborMemory['importFiles']} */
  importFiles(files) {
    return this.#enqueue(() => this.#exclusive('importFiles', () => this.#import(files)));
  }

  /**
   * @param {Iterable<import('./index.d.ts').TreeFile>} files
   * @returns {Promise<import('./index.d.ts').ImportReport>}
   */
  async #import(files) {
    const { storage, maxFileBytes, readOnly } = this.#options;
    if (readOnly) throw new ArborError('read_only', 'importFiles: the memory is open read-only (the host granted no writes): nothing was written');
    await this.#running('importFiles');
    const report = importInto(storage, files, { maxFileBytes });
    if (report.imported.length === 0) return report;
    // The restart below drops the running engine: write its batched
    // lifecycle signals and index first, so they are saved with the import.
    result('importFiles', await this.#send('importFiles', this.#envelope('flush', {})));
    // The engine reads the tree at open: restart it on the new files.
    // A failed save rolls the storage back before the restart.
    /** @type {Error | null} */
    let saveError = null;
    try {
      await storage.commit?.();
    } catch (err) {
      saveError = /** @type {Error} */ (err); // cast: a storage's commit rejects with an Error (StorageError)
    }
    await this.#restart('importFiles');
    if (saveError) {
      throw new ArborError('io', `importFiles: not saved, nothing was imported: ${saveError.message}`, { cause: saveError });
    }
    return report;
  }

  /** @type {ArborMemory['sync']} */
  sync(options) {
    return this.#withGit('sync', (git, run) => git.sync(run, options));
  }

  /** @type {ArborMemory['syncStatus']} */
  syncStatus(options) {
    return this.#withGit('syncStatus', (git, run) => git.status(run, options));
  }

  /**
   * Runs a sync adapter's step on the storage, between calls, holding the
   * storage's lock: the engine writes nothing meanwhile. What the step
   * wrote is saved and read again by the engine (refresh, docs/ABI.md
   * §4.12), also when it fails halfway.
   *
   * @template T
   * @param {string} method
   * @param {(git: import('./index.d.ts').GitSync, run: import('./index.d.ts').SyncRun) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  #withGit(method, fn) {
    const { git, storage, readOnly } = this.#options;
    if (!git) {
      return Promise.reject(new ArborError('invalid_params', `${method}: needs the git option: openMemory({ git: gitSync() }), gitSync from 'arbor-memory/sync'`));
    }
    if (readOnly && method === 'sync') return Promise.reject(new ArborError('read_only', 'sync: the memory is open read-only (the host granted no writes): nothing was synced'));
    return this.#enqueue(() =>
      this.#exclusive(method, async () => {
        await this.#catchUp(method);
        const engine = await this.#running(method);
        /** @type {Set<string>} */
        const changed = new Set();
        /** @type {import('./index.d.ts').SyncRun['merge']} */
        const merge = async (params) => result('merge', await engine[send](this.#envelope('merge', params), 'merge'));
        try {
          return await fn(git, { storage, merge, changed });
        } finally {
          // Dot-files (.gitignore) are git's, outside the tree the engine reads.
          const paths = [...changed].filter((p) => !p.split('/').some((s) => s.startsWith('.')));
          await this.#save(method);
          if (paths.length > 0) result('refresh', await this.#send('refresh', this.#envelope('refresh', { paths })));
        }
      }),
    );
  }

  /** @type {ArborMemory['close']} */
  close() {
    this.#unwatch();
    this.#unfollow();
    this.#closing ??= this.#enqueue(() =>
      // A memory behind another's save has nothing of its own left to
      // write (every call saved before answering): it just stops.
      this.#exclusive(
        'close',
        async (reloaded) => {
          const engine = this.#engine;
          this.#engine = null;
          if (!engine) return;
          if (reloaded) return engine.dispose();
          const response = await engine[finish](this.#envelope('close', {}), 'close');
          await this.#options.storage.commit?.();
          if (response !== null) result('close', response);
        },
        { restart: false },
      ),
    );
    return this.#closing;
  }
}

/**
 * The `result` of a response envelope, or its `error` thrown as an ArborError.
 *
 * @template [T=unknown]
 * @param {string} method
 * @param {Uint8Array} bytes
 * @returns {T} the result of `method`, of the shape docs/ABI.md §4 gives it
 */
function result(method, bytes) {
  /** @type {{ result?: unknown, error?: { code?: string, message?: string } } | null} */
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
  // Cast: the engine answers each method with the result docs/ABI.md §4
  // describes, which is the type the caller asks for.
  return /** @type {T} */ (msg?.result);
}

if (typeof Symbol.asyncDispose === 'symbol') {
  // `await using mem = await openMemory(…)` closes the memory at scope exit.
  // (Cast: JS cannot declare the method in the class without defining it
  // on every runtime; it is added only where the symbol exists.)
  /** @type {Memory & AsyncDisposable} */ (Memory.prototype)[Symbol.asyncDispose] = Memory.prototype.close;
  /** @type {Engine & AsyncDisposable} */ (Engine.prototype)[Symbol.asyncDispose] = Engine.prototype.dispose;
}
