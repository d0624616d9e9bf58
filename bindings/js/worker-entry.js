// The script a worker runs for openMemoryInWorker (worker.js): a Web
// Worker, or in Node a worker_threads Worker. One open memory per worker,
// driven by messages. Requests carry an `id`; each answer carries the
// same `id` with `value`, or `error` as { name, code, message } for the
// page to rebuild.

import { openMemory, memory, indexedDB } from './index.js';

/** @typedef {import('./index.d.ts').OpenOptions} OpenOptions */
/** @typedef {import('./index.d.ts').TreeFile} TreeFile */
/** @typedef {import('./worker.d.ts').WorkerStorage} WorkerStorage */

/**
 * What openMemoryInWorker (worker.js) sends with `open`: the storage to
 * make here and the options that can cross to a worker (a relative wasm
 * URL already made absolute, a Date as its ISO string).
 *
 * @typedef {object} WorkerOpen
 * @property {WorkerStorage} [storage]
 * @property {string | ArrayBuffer | ArrayBufferView | WebAssembly.Module} [wasm]
 * @property {string} [fixedTime]
 * @property {OpenOptions['maxFileBytes']} [maxFileBytes]
 * @property {OpenOptions['lifecycle']} [lifecycle]
 * @property {OpenOptions['llmOptions']} [llmOptions]
 * @property {OpenOptions['readOnly']} [readOnly]
 * @property {OpenOptions['maxMemoryBytes']} [maxMemoryBytes]
 * @property {import('./index.d.ts').OpenAIEmbeddingsOptions} [embeddings]
 *   what the worker makes its embedder of (openaiEmbeddings)
 * @property {SharedArrayBuffer} [lockSlot] where the worker keeps the token
 *   of the root's lock while it holds it (nodeFs), so that the page can
 *   release the lock of a worker it ended at a deadline
 * @property {boolean} forwardLogs
 * @property {boolean} [forwardOutput]
 * @property {boolean} forwardExternalChanges
 * @property {boolean} [forwardProgress]
 */

/**
 * The page's requests, by op; each comes as `{ id, op, ...args }`.
 *
 * @typedef {object} Requests
 * @property {{ options: WorkerOpen }} open
 * @property {{ method: string, params?: Record<string, unknown> }} call
 * @property {{}} exportFiles
 * @property {{ files: TreeFile[] }} importFiles
 * @property {{}} close
 */

/**
 * What the worker posts to the page: an answer (`id` with `value` or
 * `error`), a log line, or news of another memory's save.
 *
 * @typedef {object} WorkerReply
 * @property {number} [id]
 * @property {unknown} [value]
 * @property {{ name: string, code?: string, message: string }} [error]
 * @property {{ level: import('./index.d.ts').LogLevel, message: string }} [log]
 * @property {{ fd: 1 | 2, line: string }} [output]
 * @property {boolean} [externalChange]
 * @property {import('./index.d.ts').Progress} [progress]
 */

/**
 * An op's answer that moves buffers to the page instead of copying them.
 * @typedef {{ value: unknown, transfer: Transferable[] }} Transfer
 */

/**
 * The dedicated worker's global scope, as far as this script uses it. The
 * package is checked with lib "dom" (whose `self` is a Window), and lib
 * "webworker" cannot be loaded beside it in one program; hence this type
 * and the cast of `self` to it.
 *
 * @typedef {object} WorkerScope
 * @property {(message: WorkerReply, transfer?: Transferable[]) => void} postMessage
 * @property {((event: { data: ({ id?: number, op?: string } & Record<string, unknown>) | null | undefined }) => void) | null} onmessage
 */

/** @type {WorkerScope} */
const scope = typeof self === 'object' ? /** @type {WorkerScope} */ (/** @type {unknown} */ (self)) : await nodeScope();

/**
 * The same scope over a worker_threads parent port, in Node.
 *
 * @returns {Promise<WorkerScope>}
 */
async function nodeScope() {
  const { parentPort } = await import('node:worker_threads');
  if (!parentPort) throw new Error('arbor: worker-entry.js runs in a worker (openMemoryInWorker), not on its own');
  const port = parentPort;
  /** @type {WorkerScope['onmessage']} */
  let handler = null;
  port.on('message', (data) => handler?.({ data }));
  return {
    // Cast: the transferables this package sends (ArrayBuffers) are Node's too.
    postMessage: (message, transfer = []) => port.postMessage(message, /** @type {import('node:worker_threads').TransferListItem[]} */ (/** @type {unknown} */ (transfer))),
    get onmessage() {
      return handler;
    },
    set onmessage(fn) {
      handler = fn;
    },
  };
}

/** @type {import('./index.d.ts').ArborMemory | null} */
let mem = null;
/** @type {(import('./index.d.ts').Storage & { close?: () => void }) | null} */
let storage = null;
/** @type {import('./index.d.ts').Embedder | null} */
let embedder = null;

/**
 * The embedder of options: a synchronous XMLHttpRequest in a Web Worker,
 * a thread of its own in Node (embed/node.js), as openMemory's caller
 * would make it in that thread.
 *
 * @param {import('./index.d.ts').OpenAIEmbeddingsOptions} options
 * @returns {Promise<import('./index.d.ts').Embedder>}
 */
async function makeEmbedder(options) {
  const { openaiEmbeddings } = typeof self === 'object' ? await import('./embed/index.js') : await import('./embed/node.js');
  return openaiEmbeddings(options);
}

/** @type {{ [Op in keyof Requests]: (args: Requests[Op]) => unknown }} */
const ops = {
  async open({ options }) {
    if (mem) throw new Error('arbor worker: a memory is already open in this worker');
    const { storage: spec = { kind: 'memory' }, wasm, fixedTime, maxFileBytes, lifecycle, llmOptions, readOnly, maxMemoryBytes, forwardLogs, forwardOutput, forwardExternalChanges, forwardProgress } = options;
    storage = await makeStorage(spec, options.lockSlot);
    embedder = options.embeddings ? await makeEmbedder(options.embeddings) : null;
    /** @type {OpenOptions['onLog']} */
    const onLog = forwardLogs ? (level, message) => scope.postMessage({ log: { level, message } }) : undefined;
    /** @type {OpenOptions['onOutput']} */
    const onOutput = forwardOutput ? (fd, line) => scope.postMessage({ output: { fd, line } }) : undefined;
    const onExternalChange = forwardExternalChanges ? () => scope.postMessage({ externalChange: true }) : undefined;
    /** @type {OpenOptions['onProgress']} */
    const onProgress = forwardProgress ? (progress) => scope.postMessage({ progress }) : undefined;
    try {
      mem = await openMemory({ storage, wasm, fixedTime, maxFileBytes, lifecycle, llmOptions, readOnly, maxMemoryBytes, ...(embedder && { embeddings: embedder }), ...(onLog && { onLog }), ...(onOutput && { onOutput }), ...(onExternalChange && { onExternalChange }), ...(onProgress && { onProgress }) });
    } catch (err) {
      embedder?.close?.();
      embedder = null;
      throw err;
    }
    return mem.opened;
  },
  call: ({ method, params }) => opened().call(method, params),
  exportFiles: async () => {
    const files = await opened().exportFiles();
    // Cast: a storage's read returns a fresh copy (memory.js slices), never
    // a view of a SharedArrayBuffer, so every buffer can be transferred.
    return { value: files, transfer: files.map((f) => /** @type {ArrayBuffer} */ (f.data.buffer)) };
  },
  importFiles: ({ files }) => opened().importFiles(files),
  async close() {
    const m = mem;
    mem = null;
    await m?.close();
    storage?.close?.();
    storage = null;
    embedder?.close?.();
    embedder = null;
  },
};

function opened() {
  if (!mem) {
    // Cast: an Error with a code, which the page's rebuild (worker.js) reads.
    const err = /** @type {Error & { code?: string }} */ (new Error('the memory is closed'));
    err.code = 'not_open';
    throw err;
  }
  return mem;
}

/**
 * @param {WorkerStorage} spec
 * @param {SharedArrayBuffer} [lockSlot]
 * @returns {Promise<import('./index.d.ts').Storage & { close?: () => void }>}
 */
async function makeStorage(spec, lockSlot) {
  if (spec.kind === 'indexedDB') return indexedDB(spec.name);
  if (spec.kind === 'memory') return memory(spec.files ?? {});
  // Imported only here: the browser's module graph never loads them.
  if (spec.kind === 'nodeFs') {
    const [{ nodeFs }, { lockToken }] = await Promise.all([import('./storage/node.js'), import('./storage/rootlock.js')]);
    const folder = nodeFs(spec.dir);
    if (lockSlot && folder.lock && folder.unlock) {
      const { lock, unlock } = folder;
      const slot = new Uint8Array(lockSlot);
      folder.lock = () => {
        lock.call(folder);
        const token = new TextEncoder().encode(lockToken(spec.dir) ?? '');
        slot.set(token.subarray(0, slot.length - 1), 1);
        Atomics.store(slot, 0, Math.min(token.length, slot.length - 1));
      };
      folder.unlock = () => {
        Atomics.store(slot, 0, 0);
        unlock.call(folder);
      };
    }
    return folder;
  }
  // Cast: a kind the type does not list, sent by a JS caller.
  throw new Error(`arbor worker: unknown storage kind ${JSON.stringify(/** @type {{ kind?: unknown }} */ (spec).kind)} (use "memory", "indexedDB" or, in Node, "nodeFs")`);
}

scope.onmessage = async ({ data }) => {
  const { id, op, ...args } = data ?? {};
  try {
    // Cast: a missing op is looked up as "undefined", which is no op either.
    if (!Object.hasOwn(ops, /** @type {string} */ (op))) throw new Error(`arbor worker: unknown operation ${JSON.stringify(op)}`);
    // Cast: worker.js sends each op with its own arguments (Requests); they
    // are not checked here beyond the op's name.
    const out = await /** @type {(args: unknown) => unknown} */ (ops[/** @type {keyof Requests} */ (op)])(args);
    if (out && typeof out === 'object' && 'transfer' in out) scope.postMessage({ id, value: /** @type {Transfer} */ (out).value }, /** @type {Transfer} */ (out).transfer);
    else scope.postMessage({ id, value: out });
  } catch (err) {
    // Cast: anything may be thrown; it is read null-safely.
    const e = /** @type {{ name?: string, code?: string, message?: string } | null | undefined} */ (err);
    scope.postMessage({ id, error: { name: e?.name ?? 'Error', code: e?.code, message: e?.message ?? String(e) } });
  }
};
