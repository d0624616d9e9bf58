// Model adapters for Arbor's LLM tiers and curation (docs/llm.md): an
// adapter turns the engine's pending request (docs/ABI.md §6) into one
// model call with fetch. openMemory({ llm }) and mem.query(q, { llm }) use
// it to answer pending results behind `await`.

import { PROVIDERS, providerInfo } from './client.js';
import { openaiCompatible } from './openai.js';
import { anthropic } from './anthropic.js';

export { LLMError } from './error.js';
export { PROVIDERS } from './client.js';
export { openaiCompatible } from './openai.js';
export { anthropic } from './anthropic.js';

/**
 * The adapter the environment describes, with the variables the Go host
 * reads (ARBOR_LLM_PROVIDER, ARBOR_LLM_BASE_URL, ARBOR_LLM_MODEL,
 * ARBOR_LLM_API_KEY, else the provider's own key variable such as
 * OPENAI_API_KEY, ARBOR_LLM_TIMEOUT (90, 90s, 2m), ARBOR_LLM_MAX_RETRIES), or
 * null when no provider is named (or it is "none"). `env` defaults to
 * process.env; `options` adds more (fetch, onRetry, …).
 *
 * @type {typeof import('./index.d.ts').adapterFromEnv}
 */
export function adapterFromEnv(env = globalThis.process?.env ?? {}, options = {}) {
  const provider = env.ARBOR_LLM_PROVIDER?.trim().toLowerCase();
  if (!provider || provider === 'none') return null;
  const info = providerInfo(provider);
  if (!info) throw new TypeError(`arbor llm: unknown provider ${JSON.stringify(provider)} (known: ${Object.keys(PROVIDERS).join(', ')})`);
  const opts = {
    ...options,
    provider,
    baseURL: env.ARBOR_LLM_BASE_URL?.trim() || undefined,
    model: env.ARBOR_LLM_MODEL?.trim(),
    apiKey: env.ARBOR_LLM_API_KEY || (info.keyEnv && env[info.keyEnv]) || undefined,
  };
  const timeout = env.ARBOR_LLM_TIMEOUT?.trim();
  if (timeout) {
    // As the Go host reads it: seconds, or a number with ms, s or m.
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(timeout);
    // Cast: the pattern allows only these units.
    const ms = m ? Number(m[1]) * /** @type {Record<string, number>} */ ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 })[m[2] ?? 's'] : 0;
    if (!(ms > 0)) throw new TypeError(`arbor llm: ARBOR_LLM_TIMEOUT ${JSON.stringify(timeout)} is not a positive duration (e.g. 90, 90s, 2m)`);
    opts.timeoutMs = ms;
  }
  if (env.ARBOR_LLM_MAX_RETRIES) {
    const n = Number(env.ARBOR_LLM_MAX_RETRIES);
    if (!Number.isInteger(n)) throw new TypeError(`arbor llm: ARBOR_LLM_MAX_RETRIES ${JSON.stringify(env.ARBOR_LLM_MAX_RETRIES)} is not a whole number`);
    opts.maxRetries = n;
  }
  // Cast: the model may be missing, which the adapter refuses with a
  // TypeError; the provider is one of the format's, as info says.
  const checked = /** @type {import('./index.d.ts').OpenAICompatibleOptions & import('./index.d.ts').AnthropicOptions} */ (opts);
  return info.format === 'anthropic' ? anthropic(checked) : openaiCompatible(checked);
}
