// The part every model adapter shares: one fetch per attempt with a
// timeout, retries with exponential backoff and jitter on 429/5xx (the
// server's Retry-After honoured), and failures as LLMError with the error
// codes of docs/ABI.md §6. The Go providers (host/llm) behave the same.

import { LLMError } from './error.js';

/** Provider names, their wire format, known base URL and usual key variable (as host/llm's Providers). */
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

/** The most of an answer that is read. */
const MAX_BODY = 16 << 20;

/**
 * Builds an adapter around a wire format.
 *
 * @param {{ endpoint(base: string): string, headers(key: string): Record<string, string>,
 *           encode(model: string, request: object): object, decode(body: any): object,
 *           errorMessage(body: any): string }} format
 * @param {string} format.name
 * @param {import('./index.d.ts').AdapterOptions & { provider: string }} options
 * @returns {import('./index.d.ts').LLMAdapter}
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
  const info = PROVIDERS[provider];
  if (!info || info.format !== format.name) {
    const names = Object.keys(PROVIDERS).filter((n) => PROVIDERS[n].format === format.name);
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
        throw fail(new LLMError('invalid', `encode the request: ${err.message}`, { cause: err }), 0);
      }
      const retries = Math.max(maxRetries, 0);
      for (let attempt = 1; ; attempt++) {
        const out = await attemptOnce({ fetchFn, url, headers, body, timeoutMs, signal, format });
        if (!(out instanceof LLMError)) {
          out.latency_ms = Math.round((performance.now() - start) * 1000) / 1000;
          return out;
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
 */
async function attemptOnce({ fetchFn, url, headers, body, timeoutMs, signal, format }) {
  if (signal?.aborted) return new LLMError('cancelled', 'cancelled', { cause: signal.reason });
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, timeoutMs);
  const onAbort = () => ctl.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const error = (code, message, extra = {}) => Object.assign(new LLMError(code, message, { cause: extra.cause }), { status: extra.status ?? 0, retryAfterMs: extra.retryAfterMs ?? -1 });
  try {
    let res, text;
    try {
      res = await fetchFn(url, { method: 'POST', headers, body, signal: ctl.signal });
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) return error('cancelled', 'cancelled', { cause: err });
      if (timedOut) return error('timeout', `no answer within ${timeoutMs} ms`, { cause: err });
      return error('http', `request failed: ${err.message}`, { cause: err });
    }
    if (text.length > MAX_BODY) return error('invalid', `the answer is larger than ${MAX_BODY >> 20} MiB`, { status: res.status });
    let json;
    let parseError = null;
    try {
      json = JSON.parse(text);
    } catch (err) {
      parseError = err;
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
      return error('invalid', `the answer could not be decoded: ${err.message}: ${snippet(text)}`, { status: res.status, cause: err });
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Whether another attempt may succeed: rate limits, server errors (529 included), timeouts, broken connections. */
function retryable(err) {
  if (err.code === 'rate_limit' || err.code === 'timeout') return true;
  return err.code === 'http' && (err.status === 0 || err.status === 408 || err.status === 409 || err.status >= 500);
}

/** The wait before retry n: full jitter over the upper half of min(base·2^(n−1), max). */
export function backoffMs(n, baseMs, maxMs) {
  const d = Math.min(baseMs * 2 ** (n - 1), maxMs);
  return d / 2 + Math.random() * (d / 2);
}

/** How long the server asked to wait, in ms: retry-after-ms, else Retry-After in seconds or as a date; -1 when absent. */
function retryAfter(headers) {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (ms >= 0) return ms;
  const v = headers.get('retry-after')?.trim();
  if (!v) return -1;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? -1 : Math.max(t - Date.now(), 0);
}

/** Waits ms, or rejects as soon as signal aborts. */
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
      reject(signal.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The start of a body, quoted, for an error message. */
export function snippet(text) {
  const s = text.trim();
  if (!s) return '(empty body)';
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}
