// Embeddings in pages and workers (docs/js.md, "Embeddings"): the
// engine's embed import is synchronous, so the call is a synchronous
// XMLHttpRequest, which dedicated workers allow (openMemoryInWorker) and
// pages still do, with a warning and without a timeout. Failed attempts are
// retried at once, without the backoff of the LLM adapters: a synchronous
// call has no way to wait without spinning. Node has its own embedder
// (node.js), which the package's Node entry exports instead.

import { LLMError } from '../llm/error.js';
import { snippet } from '../llm/client.js';
import { decodeEmbeddings, embeddingsOptions, envOptions } from './format.js';

/**
 * @type {typeof import('../index.d.ts').openaiEmbeddings}
 */
export function openaiEmbeddings(options) {
  const opts = /** @type {any} */ (embeddingsOptions(options));
  if (typeof XMLHttpRequest !== 'function') throw new TypeError('arbor embeddings: no XMLHttpRequest here; in Node import the package itself, whose embedder waits on a worker thread');
  const inWorker = typeof globalThis.document === 'undefined';
  /** @param {string[]} texts */
  const attempt = (texts) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${opts.baseURL}/embeddings`, false);
    xhr.setRequestHeader('content-type', 'application/json');
    for (const [k, v] of Object.entries(opts.headers ?? {})) xhr.setRequestHeader(k, String(v));
    if (opts.apiKey) xhr.setRequestHeader('authorization', `Bearer ${opts.apiKey}`);
    if (inWorker) xhr.timeout = opts.timeoutMs; // a page's synchronous request cannot have one
    try {
      xhr.send(JSON.stringify({ model: opts.model, input: texts }));
    } catch (err) {
      const e = /** @type {Error} */ (err);
      return new LLMError(e.name === 'TimeoutError' ? 'timeout' : 'http', `request failed: ${e.message}`, { cause: err });
    }
    const text = xhr.responseText;
    if (xhr.status === 401 || xhr.status === 403) return Object.assign(new LLMError('auth', `the API key was refused (HTTP ${xhr.status}): ${snippet(text)}`), { status: xhr.status });
    if (xhr.status === 429) return Object.assign(new LLMError('rate_limit', `rate limited (HTTP 429): ${snippet(text)}`), { status: 429 });
    if (xhr.status < 200 || xhr.status > 299) return Object.assign(new LLMError('http', `HTTP ${xhr.status}: ${snippet(text)}`), { status: xhr.status });
    try {
      return decodeEmbeddings(JSON.parse(text), texts.length);
    } catch (err) {
      return new LLMError('invalid', `${/** @type {Error} */ (err).message}: ${snippet(text)}`, { cause: err });
    }
  };
  return {
    model: opts.model,
    embedSync(texts) {
      for (let n = 1; ; n++) {
        const out = attempt(texts);
        if (!(out instanceof LLMError)) return out;
        const retry = out.code === 'rate_limit' || out.code === 'timeout' || (out.code === 'http' && (out.status === 0 || out.status >= 500));
        if (!retry || n > Math.max(opts.maxRetries, 0)) {
          if (opts.apiKey) out.message = out.message.split(opts.apiKey).join('[redacted]');
          throw out;
        }
      }
    },
    close() {},
  };
}

/**
 * @type {typeof import('../index.d.ts').embeddingsFromEnv}
 */
export function embeddingsFromEnv(env = /** @type {any} */ (globalThis).process?.env ?? {}) {
  const opts = envOptions(env);
  return opts ? openaiEmbeddings(opts) : null;
}
