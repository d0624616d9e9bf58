// The worker thread behind Node's embedder (node.js): it makes the
// /embeddings calls with fetch, retries and backoff (the LLM adapters'
// createAdapter), posts each answer on its port and wakes the engine's
// thread, which waits on the shared flag while the synchronous embed
// import runs.

import { workerData } from 'node:worker_threads';
import { createAdapter } from '../llm/client.js';
import { embeddingsFormat } from './format.js';

const { options, port, flag } = workerData;
const signal = new Int32Array(flag);

port.on('message', async (/** @type {{ texts: string[] }} */ { texts }) => {
  /** @type {{ vectors?: number[][], error?: { code: string, message: string } }} */
  let answer;
  try {
    // Cast: the format's request is { input }, not a chat request.
    const res = await createAdapter(embeddingsFormat(texts.length), options).complete(/** @type {any} */ ({ input: texts }));
    answer = { vectors: /** @type {any} */ (res).vectors };
  } catch (err) {
    const e = /** @type {{ code?: string, message?: string }} */ (err);
    answer = { error: { code: typeof e?.code === 'string' ? e.code : 'http', message: String(e?.message ?? err) } };
  }
  port.postMessage(answer);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});
