// The part every model adapter shares: one fetch per attempt with a
// timeout, retries with exponential backoff and jitter on 429/5xx (the
// server's Retry-After honoured), and failures as LLMError with the error
// codes of docs/ABI.md §6. The Go providers (host/llm) behave the same.

import { LLMError } from './error.js';

/** @typedef {import('./index.d.ts').LLMRequest} LLMRequest */
/** @typedef {import('./index.d.ts').LLMResponse} LLMResponse */
/** @typedef {import('./index.d.ts').LLMAdapter} LLMAdapter */
/** @typedef {import('./index.d.ts').LLMErrorCode} LLMErrorCode */
/** @typedef {keyof typeof PROVIDERS} Provider */

/**
 * A provider's wire format, for createAdapter.
 *
 * @template Body the provider's JSON answer, as far as the format reads it
 * @typedef {object} WireFormat
 * @property {'openai' | 'anthropic'} name
 * @property {(base: string) => string} endpoint the URL of a call
 * @property {(key: string) => Record<string, string>} headers
 * @property {(model: string, request: LLMRequest) => object} encode the request's JSON body
 * @property {(body: Body) => Answer} decode the model's answer; throws an LLMError (or any error) when there is none
 * @property {(body: Body) => string} errorMessage the provider's words in an error answer, or ''
 */

/**
 * An answer as a format decodes it: latency_ms is added by the adapter.
 * @typedef {Omit<LLMResponse, 'latency_ms'> & { latency_ms?: number }} Answer
 */

/**
 * A failed attempt: an LLMError that says whether and when to retry.
 * @typedef {LLMError & { status: number, retryAfterMs: number }} AttemptError
 */

/**
 * Provider names, their wire format, known base URL and usual key variable (as host/llm's Providers).
 *
 * @type {typeof import('./index.d.ts').PROVIDERS}
 */
export const PROVIDERS = Object.freeze({
  openai: { format: 'openai', baseURL: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY', needsKey: true },
  openrouter: { format: 'openai', baseURL: 'https://openrouter.ai/api/v1', keyEnv: 'OPENROUTER_API_KEY', needsKey: true },
  groq: { format: 'openai', baseURL: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY', needsKey: true },
  ollama: { format: 'openai', baseURL: 'http://localhost:11434/v1', keyEnv: '', needsKey: false },
  lmstudio: { format: 'openai', baseURL: 'http://localhost:1234/v1', keyEnv: '', needsKey: false },
  vllm: { format: 'openai', baseURL: 'http://localhost:8000/v1', keyEnv: '', needsKey: false },
  'openai-compatible': { format: 'openai', baseURL: '', keyEnv: '', needsKey: false },
  anthropic: { format: 'anthropic', baseURL: 'https://api.anthropic.com', keyEnv: 'ANTHROPIC_API_KEY', needsKey: true },
});

/**
 * The PROVIDERS entry of `name`, or undefined when it names none: an own
 * property only, not what the frozen object inherits ("constructor", …).
 *
 * @param {string} name
 */
export function providerInfo(name) {
  return Object.hasOwn(PROVIDERS, name) ? PROVIDERS[/** @type {Provider} */ (name)] : undefined; // cast: hasOwn just said so
}

/** The most of an answer that is read. */
const MAX_BODY = 16 << 20;

/**
 * Builds an adapter around a wire format.
 *
 * @template Body
 * @param {WireFormat<Body>} format
 * @param {import('./index.d.ts').AdapterOptions & { provider: string }} options
 *   `provider` is checked against PROVIDERS and the format
 * @returns {LLMAdapter}
 */
export function createAdapter(format, options) {
  const {
    provider,
    model,
    apiKey = '',
    headers: extraHeaders = {},
    timeoutMs = 120_000,
    maxRetries = 3,
    backoff: { baseMs = 500, maxMs = 30_000 } = {},
    onRetry,
    sleep = sleepSignal,
  } = options;
  const info = providerInfo(provider);
  if (!info || info.format !== format.name) {
    const names = Object.keys(PROVIDERS).filter((n) => providerInfo(n)?.format === format.name);
    throw new TypeError(`arbor llm: unknown ${format.name} provider ${JSON.stringify(provider)} (known: ${names.join(', ')})`);
  }
  const baseURL = (options.baseURL || info.baseURL).replace(/\/+$/, '');
  if (!baseURL) throw new TypeError(`arbor llm: provider ${provider} needs a baseURL`);
  if (!/^https?:\/\/[^/]/.test(baseURL)) throw new TypeError(`arbor llm: baseURL ${JSON.stringify(baseURL)} is not an http(s) URL`);
  if (!model) throw new TypeError(`arbor llm: provider ${provider} needs a model`);
  if (info.needsKey && !apiKey) throw new TypeError(`arbor llm: provider ${provider} needs an apiKey`);
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new TypeError('arbor llm: no fetch in this environment; pass options.fetch');
  const url = format.endpoint(baseURL);
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...extraHeaders, ...format.headers(apiKey) };
  /**
   * @template {LLMError} E
   * @param {E} err
   * @param {number} attempts
   * @returns {E}
   */
  const fail = (err, attempts) => {
    err.provider = provider;
    err.attempts = attempts;
    // A server may echo the key it refused.
    if (apiKey) err.message = err.message.split(apiKey).join('[redacted]');
    if (attempts > 1) err.message += ` (after ${attempts} attempts)`;
    err.message = `${provider}: ${err.message}`;
    return err;
  };

  return {
    provider,
    model,
    async complete(request, { signal } = {}) {
      const start = performance.now();
      let body;
      try {
        body = JSON.stringify(format.encode(model, request));
      } catch (err) {
        // Cast: an Error from the format, or JSON.stringify's TypeError.
        throw fail(new LLMError('invalid', `encode the request: ${/** @type {Error} */ (err).message}`, { cause: err }), 0);
      }
      const retries = Math.max(maxRetries, 0);
      for (let attempt = 1; ; attempt++) {
        const out = await attemptOnce({ fetchFn, url, headers, body, timeoutMs, signal, format });
        if (!(out instanceof LLMError)) {
          out.latency_ms = Math.round((performance.now() - start) * 1000) / 1000;
          return /** @type {LLMResponse} */ (out); // cast: latency_ms is set now
        }
        if (!retryable(out) || attempt > retries) throw fail(out, attempt);
        let wait = backoffMs(attempt, baseMs, maxMs);
        let asked = false;
        if (out.retryAfterMs >= 0) {
          if (out.retryAfterMs > maxMs) {
            out.message += `; the server asked to wait ${out.retryAfterMs / 1000}s, longer than the ${maxMs / 1000}s the adapter waits at most`;
            throw fail(out, attempt);
          }
          wait = out.retryAfterMs;
          asked = true;
        }
        onRetry?.({ attempt, status: out.status, waitMs: wait, retryAfter: asked, reason: out.message });
        try {
          await sleep(wait, signal);
        } catch (err) {
          throw fail(new LLMError('cancelled', 'cancelled', { cause: err }), attempt);
        }
      }
    },
  };
}

/**
 * One HTTP attempt: resolves with the decoded response, or with an
 * LLMError (never rejects) carrying `retryAfterMs` (-1: not said).
 *
 * @template Body
 * @param {{ fetchFn: typeof fetch, url: string, headers: Record<string, string>, body: string,
 *           timeoutMs: number, signal?: AbortSignal, format: WireFormat<Body> }} attempt
 * @returns {Promise<Answer | AttemptError | LLMError>}
 */
async function attemptOnce({ fetchFn, url, headers, body, timeoutMs, signal, format }) {
  if (signal?.aborted) return new LLMError('cancelled', 'cancelled', { cause: signal.reason });
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, timeoutMs);
  const onAbort = () => ctl.abort(/** @type {AbortSignal} */ (signal).reason); // cast: only signal calls it
  signal?.addEventListener('abort', onAbort, { once: true });
  /**
   * @param {LLMErrorCode} code
   * @param {string} message
   * @param {{ cause?: unknown, status?: number, retryAfterMs?: number }} [extra]
   * @returns {AttemptError}
   */
  const error = (code, message, extra = {}) => Object.assign(new LLMError(code, message, { cause: extra.cause }), { status: extra.status ?? 0, retryAfterMs: extra.retryAfterMs ?? -1 });
  try {
    let res, text;
    try {
      res = await fetchFn(url, { method: 'POST', headers, body, signal: ctl.signal });
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) return error('cancelled', 'cancelled', { cause: err });
      if (timedOut) return error('timeout', `no answer within ${timeoutMs} ms`, { cause: err });
      return error('http', `request failed: ${/** @type {Error} */ (err).message}`, { cause: err }); // cast: fetch rejects with Errors
    }
    if (text.length > MAX_BODY) return error('invalid', `the answer is larger than ${MAX_BODY >> 20} MiB`, { status: res.status });
    let json;
    /** @type {SyntaxError | null} */
    let parseError = null;
    try {
      json = JSON.parse(text);
    } catch (err) {
      parseError = /** @type {SyntaxError} */ (err); // cast: what JSON.parse throws
    }
    if (!res.ok) {
      const message = (json !== undefined && format.errorMessage(json)) || snippet(text);
      const status = res.status;
      const retryAfterMs = retryAfter(res.headers);
      if (status === 401 || status === 403) return error('auth', `the API key was refused (HTTP ${status}): ${message}`, { status });
      if (status === 429) return error('rate_limit', `rate limited (HTTP 429): ${message}`, { status, retryAfterMs });
      return error('http', `HTTP ${status}: ${message}`, { status, retryAfterMs });
    }
    if (parseError) return error('invalid', `the answer could not be decoded: ${parseError.message}: ${snippet(text)}`, { status: res.status, cause: parseError });
    try {
      return format.decode(json);
    } catch (err) {
      if (err instanceof LLMError) return Object.assign(err, { status: res.status, retryAfterMs: -1 });
      // Cast: a decode that fails other than with an LLMError hits a TypeError or the like.
      return error('invalid', `the answer could not be decoded: ${/** @type {Error} */ (err).message}: ${snippet(text)}`, { status: res.status, cause: err });
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Whether another attempt may succeed: rate limits, server errors (529 included), timeouts, broken connections.
 * Such errors all come from error() or a failed decode, which say when to retry: hence the type guard.
 *
 * @param {LLMError} err
 * @returns {err is AttemptError}
 */
function retryable(err) {
  if (err.code === 'rate_limit' || err.code === 'timeout') return true;
  return err.code === 'http' && (err.status === 0 || err.status === 408 || err.status === 409 || err.status >= 500);
}

/**
 * The wait before retry n: full jitter over the upper half of min(base·2^(n−1), max).
 *
 * @param {number} n
 * @param {number} baseMs
 * @param {number} maxMs
 */
export function backoffMs(n, baseMs, maxMs) {
  const d = Math.min(baseMs * 2 ** (n - 1), maxMs);
  return d / 2 + Math.random() * (d / 2);
}

/**
 * How long the server asked to wait, in ms: retry-after-ms, else Retry-After in seconds or as a date; -1 when absent.
 *
 * @param {Headers} headers
 */
function retryAfter(headers) {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (ms >= 0) return ms;
  const v = headers.get('retry-after')?.trim();
  if (!v) return -1;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? -1 : Math.max(t - Date.now(), 0);
}

/**
 * Waits ms, or rejects as soon as signal aborts.
 *
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function sleepSignal(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(/** @type {AbortSignal} */ (signal).reason); // cast: only signal calls it
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The start of a body, quoted, for an error message.
 *
 * @param {string} text
 */
export function snippet(text) {
  const s = text.trim();
  if (!s) return '(empty body)';
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}
