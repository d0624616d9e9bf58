// Embeddings in Node (docs/js.md, "Embeddings"): the engine's embed import
// is synchronous, fetch is not, so a worker thread (worker.js) makes the
// call while the engine's thread waits on a shared flag (Atomics.wait,
// which Node allows on its main thread) and then reads the answer off the
// port (receiveMessageOnPort). The wait blocks the thread as the engine's
// own work does: a call of the engine never yields to the event loop.

import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { LLMError } from '../llm/error.js';
import { embeddingsOptions, envOptions } from './format.js';

/**
 * @type {typeof import('../index.d.ts').openaiEmbeddings}
 */
export function openaiEmbeddings(options) {
  const { onRetry, fetch, sleep, ...rest } = /** @type {any} */ (embeddingsOptions(options));
  if (fetch || onRetry || sleep) throw new TypeError('arbor embeddings: fetch, onRetry and sleep cannot reach the worker thread that makes the calls in Node');
  /** @type {{ worker: Worker, port: import('node:worker_threads').MessagePort, flag: Int32Array } | null} */
  let thread = null;
  const start = () => {
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { options: rest, port: port2, flag }, transferList: [port2] });
    worker.unref(); // an idle embedder keeps no process alive
    port1.unref();
    return { worker, port: port1, flag: new Int32Array(flag) };
  };
  return {
    model: rest.model,
    embedSync(texts) {
      thread ??= start();
      Atomics.store(thread.flag, 0, 0);
      thread.port.postMessage({ texts });
      // The worker's own timeout and retries bound the wait; this bound
      // only catches a worker that died.
      const bound = (rest.timeoutMs + 31_000) * (Math.max(rest.maxRetries, 0) + 1);
      if (Atomics.wait(thread.flag, 0, 0, bound) === 'timed-out') {
        thread.worker.terminate();
        thread = null;
        throw new LLMError('timeout', `the embedding worker did not answer within ${bound} ms`);
      }
      const msg = receiveMessageOnPort(thread.port)?.message;
      if (msg?.error) throw new LLMError(msg.error.code, msg.error.message);
      return msg.vectors;
    },
    close() {
      thread?.worker.terminate();
      thread = null;
    },
  };
}

/**
 * @type {typeof import('../index.d.ts').embeddingsFromEnv}
 */
export function embeddingsFromEnv(env = globalThis.process?.env ?? {}) {
  const opts = envOptions(env);
  return opts ? openaiEmbeddings(opts) : null;
}
