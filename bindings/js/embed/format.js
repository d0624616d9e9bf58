// What every embedding transport shares (docs/llm.md, "Embeddings"): the
// options an OpenAI-compatible /embeddings endpoint is reached with, read
// from the environment as the Go host reads them, and the checks of its
// answer. The engine's embed import is synchronous (docs/ABI.md §2.3), so
// the transports differ: Node waits on a worker thread (node.js), pages and
// workers make a synchronous XMLHttpRequest (index.js).

import { LLMError } from '../llm/error.js';
import { createAdapter, PROVIDERS, providerInfo } from '../llm/client.js';

/** @typedef {import('../index.d.ts').OpenAIEmbeddingsOptions} OpenAIEmbeddingsOptions */

/**
 * The wire format of /embeddings, for createAdapter: the request is
 * `{ model, input }`, the answer's vectors come back as the decoded value.
 *
 * @param {number} n the number of texts sent
 * @returns {import('../llm/client.js').WireFormat<any>}
 */
export function embeddingsFormat(n) {
  return {
    name: 'openai',
    endpoint: (base) => `${base}/embeddings`,
    headers: (key) => /** @type {Record<string, string>} */ (key ? { authorization: `Bearer ${key}` } : {}),
    encode: (model, request) => ({ model, input: /** @type {{ input: string[] }} */ (/** @type {unknown} */ (request)).input }),
    // Cast: the adapter hands back what decode returns; the embedder reads `vectors`.
    decode: (body) => /** @type {any} */ ({ vectors: decodeEmbeddings(body, n) }),
    errorMessage: (body) => (typeof body?.error?.message === 'string' ? body.error.message : typeof body?.error === 'string' ? body.error : ''),
  };
}

/**
 * The checked options with their defaults: the provider's base URL, a
 * timeout of 30 s and one retry (shorter than a chat model's: a query
 * waits on the question's vector, and a failure costs only BM25 alone).
 *
 * @param {OpenAIEmbeddingsOptions} options
 */
export function embeddingsOptions(options) {
  const provider = options.provider ?? (options.baseURL ? 'openai-compatible' : 'openai');
  const opts = { timeoutMs: 30_000, maxRetries: 1, ...options, provider };
  // createAdapter checks the provider, URL, model and key, and throws
  // what it finds wrong; the adapter itself is not kept.
  createAdapter(embeddingsFormat(0), opts);
  return { ...opts, baseURL: (options.baseURL || providerInfo(provider)?.baseURL || '').replace(/\/+$/, '') };
}

/**
 * Reads an /embeddings answer: data[i].embedding for every index 0…n−1,
 * all of one length, finite numbers (as host/llm's decodeEmbeddings).
 *
 * @param {any} body
 * @param {number} n
 * @returns {number[][]}
 */
export function decodeEmbeddings(body, n) {
  const data = body?.data;
  if (!Array.isArray(data)) throw new LLMError('invalid', 'the answer is not an embeddings list');
  if (data.length !== n) throw new LLMError('invalid', `${data.length} vectors for ${n} texts`);
  /** @type {number[][]} */
  const out = new Array(n);
  const dims = Array.isArray(data[0]?.embedding) ? data[0].embedding.length : 0;
  data.forEach((d, i) => {
    const at = Number.isInteger(d?.index) ? d.index : i;
    if (at < 0 || at >= n || out[at] !== undefined) throw new LLMError('invalid', `vector ${i} has index ${at}`);
    const v = d?.embedding;
    if (!Array.isArray(v) || v.length === 0 || v.length !== dims) {
      throw new LLMError('invalid', `vector ${i} has ${Array.isArray(v) ? v.length : 0} dimensions, vector 0 ${dims}`);
    }
    if (!v.every((x) => typeof x === 'number' && Number.isFinite(x))) throw new LLMError('invalid', `vector ${i} holds something other than numbers`);
    out[at] = v;
  });
  return out;
}

/**
 * The options the environment describes, with the variables the Go host
 * reads (ARBOR_EMBED_PROVIDER, ARBOR_EMBED_BASE_URL, ARBOR_EMBED_MODEL,
 * ARBOR_EMBED_API_KEY, else the provider's own key variable,
 * ARBOR_EMBED_TIMEOUT, ARBOR_EMBED_MAX_RETRIES), or null when no provider is
 * named (or it is "none").
 *
 * @param {Record<string, string | undefined>} env
 * @returns {OpenAIEmbeddingsOptions | null}
 */
export function envOptions(env) {
  const provider = env.ARBOR_EMBED_PROVIDER?.trim().toLowerCase();
  if (!provider || provider === 'none') return null;
  const info = providerInfo(provider);
  if (!info) throw new TypeError(`arbor embeddings: unknown provider ${JSON.stringify(provider)} (known: ${Object.keys(PROVIDERS).join(', ')})`);
  if (info.format !== 'openai') throw new TypeError(`arbor embeddings: provider ${provider} has no /embeddings endpoint: name an OpenAI-compatible provider`);
  /** @type {OpenAIEmbeddingsOptions} */
  const opts = {
    provider: /** @type {OpenAIEmbeddingsOptions['provider']} */ (provider),
    baseURL: env.ARBOR_EMBED_BASE_URL?.trim() || undefined,
    model: env.ARBOR_EMBED_MODEL?.trim() ?? '',
    apiKey: env.ARBOR_EMBED_API_KEY || (info.keyEnv && env[info.keyEnv]) || undefined,
  };
  const timeout = env.ARBOR_EMBED_TIMEOUT?.trim();
  if (timeout) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(timeout);
    // Cast: the pattern allows only these units.
    const ms = m ? Number(m[1]) * /** @type {Record<string, number>} */ ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 })[m[2] ?? 's'] : 0;
    if (!(ms > 0)) throw new TypeError(`arbor embeddings: ARBOR_EMBED_TIMEOUT ${JSON.stringify(timeout)} is not a positive duration (e.g. 30, 30s, 2m)`);
    opts.timeoutMs = ms;
  }
  if (env.ARBOR_EMBED_MAX_RETRIES) {
    const n = Number(env.ARBOR_EMBED_MAX_RETRIES);
    if (!Number.isInteger(n)) throw new TypeError(`arbor embeddings: ARBOR_EMBED_MAX_RETRIES ${JSON.stringify(env.ARBOR_EMBED_MAX_RETRIES)} is not a whole number`);
    opts.maxRetries = n;
  }
  return opts;
}
