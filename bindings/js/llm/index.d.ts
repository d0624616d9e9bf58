// Types of Arbor's model adapters (bindings/js/llm). The request and
// response shapes are the wire types of docs/ABI.md §6 (core/api/llm.go).

/** One turn of a conversation with the model. */
export interface LLMMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** The calls an assistant turn made. */
  tool_calls?: LLMToolCall[];
  /** Ties a tool turn to the call it answers. */
  tool_call_id?: string;
}

/** A model's request to run one tool. */
export interface LLMToolCall {
  id: string;
  name: string;
  /** The model's JSON text, as it wrote it (possibly malformed). */
  arguments: string;
}

/** A tool the model may call. */
export interface LLMTool {
  name: string;
  description: string;
  /** The JSON Schema of the arguments object. */
  parameters: object;
}

/** The `llm` object of a pending result: one model call to make. */
export interface LLMRequest {
  messages: LLMMessage[];
  tools?: LLMTool[];
  max_tokens: number;
  temperature: number;
}

/** The model's answer, as `resume` takes it. */
export interface LLMResponse {
  content: string;
  tool_calls?: LLMToolCall[];
  usage: { input_tokens: number; output_tokens: number };
  /** The model that answered, when the provider says. */
  model?: string;
  /** How long the call took, retries and waits included. */
  latency_ms: number;
}

/** Error codes of a failed model call (docs/ABI.md §6). */
export type LLMErrorCode = 'timeout' | 'rate_limit' | 'auth' | 'http' | 'invalid' | 'cancelled';

/** What adapters reject with; the memory passes `code` to the engine's `resume`. */
export declare class LLMError extends Error {
  constructor(code: LLMErrorCode, message: string, options?: { cause?: unknown });
  readonly name: 'LLMError';
  code: LLMErrorCode;
  /** The last HTTP status, 0 when there was no answer. */
  status: number;
  /** HTTP requests made, retries included. */
  attempts: number;
  provider: string;
}

/**
 * Makes the model calls a memory's pending results ask for. The adapters
 * below are built on fetch; any object with this method will do (one that
 * calls your own backend, say).
 */
export interface LLMAdapter {
  /** Makes one call; rejects with an {@link LLMError} (or any error, passed on as code `http`). */
  complete(request: LLMRequest, options?: { signal?: AbortSignal }): Promise<LLMResponse>;
  readonly provider?: string;
  readonly model?: string;
}

/** A retry an adapter is about to make, for {@link AdapterOptions.onRetry}. */
export interface RetryInfo {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Its HTTP status; 0 for a timeout or a broken connection. */
  status: number;
  /** How long the adapter waits before the next attempt. */
  waitMs: number;
  /** True when waitMs is what the server asked for (Retry-After, retry-after-ms). */
  retryAfter: boolean;
  reason: string;
}

/** Options every adapter takes. */
export interface AdapterOptions {
  /** The model name, as the provider spells it (required). */
  model: string;
  /** The API key; required by the cloud providers, not by local servers. */
  apiKey?: string;
  /** The API's base URL. @default the provider's (see {@link PROVIDERS}) */
  baseURL?: string;
  /** Headers sent with every request (OpenRouter's HTTP-Referer and X-Title, a proxy's own). */
  headers?: Record<string, string>;
  /** Bounds each attempt. @default 120000 */
  timeoutMs?: number;
  /** Retries of a 429, a 5xx, a timeout or a broken connection. @default 3 */
  maxRetries?: number;
  /**
   * The wait before retry n is random between half and all of
   * min(baseMs·2^(n−1), maxMs); a Retry-After longer than maxMs is not waited
   * for (the call fails). @default { baseMs: 500, maxMs: 30000 }
   */
  backoff?: { baseMs?: number; maxMs?: number };
  /** Called before each retry's wait. */
  onRetry?: (retry: RetryInfo) => void;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Replaces the wait between attempts (tests record waits instead of waiting); must reject when signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Provider names of {@link openaiCompatible}. */
export type OpenAIProvider = 'openai' | 'openrouter' | 'groq' | 'ollama' | 'lmstudio' | 'vllm' | 'openai-compatible';

export interface OpenAICompatibleOptions extends AdapterOptions {
  /**
   * Picks the known base URL. @default 'openai-compatible' when baseURL is
   * given, else 'openai'
   */
  provider?: OpenAIProvider;
}

export interface AnthropicOptions extends AdapterOptions {
  /**
   * Sends `anthropic-dangerous-direct-browser-access`, without which the
   * API refuses a page's requests. Calling it from a page exposes the key
   * to the page's users. @default true outside Node
   */
  browser?: boolean;
}

/**
 * Chat completions: OpenAI, OpenRouter, Groq, Ollama, LM Studio, vLLM or
 * any OpenAI-compatible server.
 *
 * @example
 * const llm = openaiCompatible({ provider: 'groq', model: 'llama-3.3-70b-versatile', apiKey: process.env.GROQ_API_KEY });
 * const mem = await openMemory({ storage: nodeFs('notes'), llm });
 */
export declare function openaiCompatible(options: OpenAICompatibleOptions): LLMAdapter;

/** Anthropic's Messages API. */
export declare function anthropic(options: AnthropicOptions): LLMAdapter;

/**
 * The adapter the environment describes with the Go host's variables
 * (ARBOR_LLM_PROVIDER, ARBOR_LLM_BASE_URL, ARBOR_LLM_MODEL,
 * ARBOR_LLM_API_KEY or the provider's own key variable, ARBOR_LLM_TIMEOUT,
 * ARBOR_LLM_MAX_RETRIES), or null when no provider is named.
 */
export declare function adapterFromEnv(env?: Record<string, string | undefined>, options?: Partial<AdapterOptions>): LLMAdapter | null;

/** Known providers: wire format, base URL, usual key variable. */
export declare const PROVIDERS: Readonly<Record<OpenAIProvider | 'anthropic', { format: 'openai' | 'anthropic'; baseURL: string; keyEnv: string; needsKey: boolean }>>;
