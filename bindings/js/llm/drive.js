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

/** @typedef {import('./index.d.ts').LLMAdapter} LLMAdapter */
/** @typedef {import('./index.d.ts').LLMRequest} LLMRequest */
/** @typedef {import('../index.d.ts').LLMStep} LLMStep */
/** @typedef {Pick<import('../index.d.ts').ArborMemory, 'call'>} Caller */
/** @typedef {{ llm: LLMAdapter, signal?: AbortSignal, onStep?: (step: LLMStep) => void }} DriveOptions */

/**
 * What a call that may need the model answers: a pending result (docs/ABI.md
 * §6.1), or the final result, which never has a `status`.
 *
 * @typedef {{ status: 'pending', continuation: string, step: number, llm: LLMRequest } | { status?: undefined }} Answer
 */

/**
 * Error codes resume accepts; an adapter's other errors go as `http`.
 * @type {Set<unknown>}
 */
const CODES = new Set(['timeout', 'rate_limit', 'auth', 'http', 'invalid', 'cancelled']);

/**
 * Calls `method` with `params` through `mem.call`, answering pending
 * results with `llm` until the engine returns the final result.
 *
 * @template T the final result
 * @param {Caller} mem
 * @param {string} method
 * @param {Record<string, unknown>} params
 * @param {DriveOptions} options
 * @returns {Promise<T>}
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
      if (/** @type {{ code?: unknown } | null | undefined} */ (err)?.code !== 'unknown_continuation' || restarts >= MAX_RESTARTS) throw err; // cast: only the code is read
    }
  }
}

/** How often a call starts over because its continuation was lost to an engine restart. */
const MAX_RESTARTS = 2;

/**
 * @template T
 * @param {Caller} mem
 * @param {string} method
 * @param {Record<string, unknown>} params
 * @param {DriveOptions} options
 * @returns {Promise<T>}
 */
async function run(mem, method, params, { llm, signal, onStep }) {
  if (signal?.aborted) throw cancelled(method, signal);
  /** @type {Answer} */
  let res = await mem.call(method, params);
  while (res?.status === 'pending') {
    const { continuation, step, llm: request } = res;
    if (signal?.aborted) {
      await cancel(mem, continuation);
      throw cancelled(method, signal);
    }
    /** @type {{ continuation: string, response?: import('./index.d.ts').LLMResponse, error?: { code: string, message: string } }} */
    const answer = { continuation };
    try {
      answer.response = await llm.complete(request, { signal });
    } catch (err) {
      if (signal?.aborted) {
        await cancel(mem, continuation);
        throw cancelled(method, signal);
      }
      // Cast: an adapter may throw anything; it is read null-safely, and
      // `code` only once CODES knows it (a string).
      const e = /** @type {{ code?: string, message?: unknown }} */ (err);
      answer.error = { code: CODES.has(e?.code) ? /** @type {string} */ (e.code) : 'http', message: String(e?.message ?? e) };
    }
    onStep?.({ step, request, response: answer.response, error: answer.error });
    res = await mem.call('resume', answer);
  }
  // Cast: not pending, so the final result of `method`, whose type the caller knows.
  return /** @type {T} */ (res);
}

/**
 * Cancels a continuation; one that expired meanwhile is gone already, which is as good.
 *
 * @param {Caller} mem
 * @param {string} continuation
 */
async function cancel(mem, continuation) {
  try {
    await mem.call('cancel', { continuation });
  } catch (err) {
    const code = /** @type {{ code?: unknown } | null | undefined} */ (err)?.code; // cast: only the code is read
    if (code !== 'continuation_expired' && code !== 'unknown_continuation') throw err;
  }
}

/**
 * @param {string} method
 * @param {AbortSignal} signal
 */
function cancelled(method, signal) {
  return new ArborError('cancelled', `${method}: cancelled${signal.reason?.message ? `: ${signal.reason.message}` : ''}`, { cause: signal.reason });
}
