// The script a Web Worker runs for openMemoryInWorker (worker.js): one
// open memory per worker, driven by messages. Requests carry an `id`; each
// answer carries the same `id` with `value`, or `error` as
// { name, code, message } for the page to rebuild.

import { openMemory, memory, indexedDB } from './index.js';

/** @type {import('./index.d.ts').ArborMemory | null} */
let mem = null;
/** @type {{ close?: () => void } | null} */
let storage = null;

const ops = {
  async open({ options }) {
    if (mem) throw new Error('arbor worker: a memory is already open in this worker');
    const { storage: spec = { kind: 'memory' }, wasm, fixedTime, maxFileBytes, llmOptions, forwardLogs, forwardExternalChanges } = options;
    storage = makeStorage(spec);
    const onLog = forwardLogs ? (level, message) => self.postMessage({ log: { level, message } }) : undefined;
    const onExternalChange = forwardExternalChanges ? () => self.postMessage({ externalChange: true }) : undefined;
    mem = await openMemory({ storage, wasm, fixedTime, maxFileBytes, llmOptions, ...(onLog && { onLog }), ...(onExternalChange && { onExternalChange }) });
    return mem.opened;
  },
  call: ({ method, params }) => opened().call(method, params),
  exportFiles: async () => {
    const files = await opened().exportFiles();
    return { value: files, transfer: files.map((f) => f.data.buffer) };
  },
  importFiles: ({ files }) => opened().importFiles(files),
  async close() {
    const m = mem;
    mem = null;
    await m?.close();
    storage?.close?.();
    storage = null;
  },
};

function opened() {
  if (!mem) {
    const err = new Error('the memory is closed');
    err.code = 'not_open';
    throw err;
  }
  return mem;
}

function makeStorage(spec) {
  if (spec.kind === 'indexedDB') return indexedDB(spec.name);
  if (spec.kind === 'memory') return memory(spec.files ?? {});
  throw new Error(`arbor worker: unknown storage kind ${JSON.stringify(spec.kind)} (use "memory" or "indexedDB")`);
}

self.onmessage = async ({ data }) => {
  const { id, op, ...args } = data ?? {};
  try {
    if (!Object.hasOwn(ops, op)) throw new Error(`arbor worker: unknown operation ${JSON.stringify(op)}`);
    const out = await ops[op](args);
    if (out && typeof out === 'object' && 'transfer' in out) self.postMessage({ id, value: out.value }, out.transfer);
    else self.postMessage({ id, value: out });
  } catch (err) {
    self.postMessage({ id, error: { name: err?.name ?? 'Error', code: err?.code, message: err?.message ?? String(err) } });
  }
};
