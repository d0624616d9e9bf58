// The pending/resume loop of docs/ABI.md §6 behind one `await`: a call
// that needs the model comes back pending; the adapter makes the model
// call; `resume` hands the engine the answer (or the error) and may come
// back pending again, until the call is done. Aborting cancels the
// continuation, which leaves the tree as it was.
//
// It runs in whichever thread calls the memory: for openMemoryInWorker
// that is the page, where the adapter (and its key) stays; the worker only
// relays the pending results and the resume calls.

import { ArborError } from '../error.js';

/** Error codes resume accepts; an adapter's other errors go as `http`. */
const CODES = new Set(['timeout', 'rate_limit', 'auth', 'http', 'invalid', 'cancelled']);

/**
 * Calls `method` with `params` through `mem.call`, answering pending
 * results with `llm` until the engine returns the final result.
 *
 * @param {{ call(method: string, params?: object): Promise<any> }} mem
 * @param {string} method
 * @param {object} params
 * @param {{ llm: import('./index.d.ts').LLMAdapter, signal?: AbortSignal,
 *           onStep?: (step: import('../index.d.ts').LLMStep) => void }} options
 */
export async function drive(mem, method, params, { llm, signal, onStep }) {
  if (typeof llm?.complete !== 'function') {
    throw new ArborError('invalid_params', `${method}: llm must be an adapter with a complete(request, { signal }) method`);
  }
  for (let restarts = 0; ; restarts++) {
    try {
      return await run(mem, method, params, { llm, signal, onStep });
    } catch (err) {
      // A memory shared with other tabs restarts its engine on their saves
      // (index.js #exclusive), and the new engine knows nothing of the old
      // one's waiting calls. Nothing was written yet (a continuation
      // stages its writes until it ends), so the call starts over, on the
      // tree as it now is.
      if (err?.code !== 'unknown_continuation' || restarts >= MAX_RESTARTS) throw err;
    }
  }
}

/** How often a call starts over because its continuation was lost to an engine restart. */
const MAX_RESTARTS = 2;

async function run(mem, method, params, { llm, signal, onStep }) {
  if (signal?.aborted) throw cancelled(method, signal);
  let res = await mem.call(method, params);
  while (res?.status === 'pending') {
    const { continuation, step, llm: request } = res;
    if (signal?.aborted) {
      await cancel(mem, continuation);
      throw cancelled(method, signal);
    }
    const answer = { continuation };
    try {
      answer.response = await llm.complete(request, { signal });
    } catch (err) {
      if (signal?.aborted) {
        await cancel(mem, continuation);
        throw cancelled(method, signal);
      }
      answer.error = { code: CODES.has(err?.code) ? err.code : 'http', message: String(err?.message ?? err) };
    }
    onStep?.({ step, request, response: answer.response, error: answer.error });
    res = await mem.call('resume', answer);
  }
  return res;
}

/** Cancels a continuation; one that expired meanwhile is gone already, which is as good. */
async function cancel(mem, continuation) {
  try {
    await mem.call('cancel', { continuation });
  } catch (err) {
    if (err?.code !== 'continuation_expired' && err?.code !== 'unknown_continuation') throw err;
  }
}

function cancelled(method, signal) {
  return new ArborError('cancelled', `${method}: cancelled${signal.reason?.message ? `: ${signal.reason.message}` : ''}`, { cause: signal.reason });
}
