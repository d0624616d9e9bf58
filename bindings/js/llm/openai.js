// The OpenAI-compatible chat-completions adapter: OpenAI, OpenRouter,
// Groq, Ollama, LM Studio, vLLM, or any server copying that API. Maps the
// engine's provider-neutral request (docs/ABI.md §6) onto chat completions
// and back, as host/llm does in Go.

import { createAdapter } from './client.js';
import { LLMError } from './error.js';

/** @typedef {import('./index.d.ts').OpenAICompatibleOptions} OpenAICompatibleOptions */

/**
 * A chat-completions request body.
 *
 * @typedef {object} OpenAIRequest
 * @property {string} model
 * @property {OpenAIMessage[]} messages
 * @property {number} temperature
 * @property {number} [max_tokens]
 * @property {number} [max_completion_tokens]
 * @property {{ type: 'function', function: { name: string, description: string, parameters: object } }[]} [tools]
 */

/**
 * @typedef {object} OpenAIMessage
 * @property {string} role
 * @property {string | null} content
 * @property {{ id: string, type: 'function', function: { name: string, arguments: string } }[]} [tool_calls]
 * @property {string} [tool_call_id]
 */

/**
 * A chat-completions answer, as far as it is read; any field may be
 * missing or of another type, which decode checks.
 *
 * @typedef {object} OpenAIBody
 * @property {{ code?: unknown, message?: unknown } | string} [error] a string from Ollama
 * @property {{ message?: { content?: unknown, tool_calls?: unknown }, finish_reason?: string | null }[]} [choices]
 * @property {{ prompt_tokens?: number, completion_tokens?: number }} [usage]
 * @property {string} [model]
 */

/**
 * A default of {} keeps the "needs a model" TypeError for a JS caller who
 * passes nothing (cast: the declaration requires options).
 *
 * @type {typeof import('./index.d.ts').openaiCompatible}
 */
export function openaiCompatible(options = /** @type {OpenAICompatibleOptions} */ ({})) {
  const provider = options.provider ?? (options.baseURL ? 'openai-compatible' : 'openai');
  return createAdapter(openAIFormat(provider === 'openai'), { ...options, provider });
}

/**
 * @param {boolean} maxCompletionTokens send max_completion_tokens, which
 *   OpenAI's own API wants (newer models refuse max_tokens); other servers
 *   know only max_tokens
 * @returns {import('./client.js').WireFormat<OpenAIBody>}
 */
function openAIFormat(maxCompletionTokens) {
  return {
    name: 'openai',
    endpoint: (base) => `${base}/chat/completions`,
    /** @returns {Record<string, string>} */
    headers: (key) => (key ? { authorization: `Bearer ${key}` } : {}),
    encode(model, req) {
      /** @type {OpenAIRequest} */
      const body = {
        model,
        messages: req.messages.map((m) => {
          /** @type {OpenAIMessage} */
          const out = { role: m.role, content: m.content || (m.tool_calls?.length ? null : '') };
          if (m.tool_calls?.length) {
            out.tool_calls = m.tool_calls.map((tc) => ({ id: tc.id, type: 'function', function: { name: tc.name, arguments: tc.arguments } }));
          }
          if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
          return out;
        }),
        temperature: req.temperature,
      };
      body[maxCompletionTokens ? 'max_completion_tokens' : 'max_tokens'] = req.max_tokens;
      if (req.tools?.length) {
        body.tools = req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
      }
      return body;
    },
    decode(body) {
      if (body?.error) {
        // OpenRouter reports some failures with status 200.
        // Cast: a string error has neither field, as the code reads it.
        const e = /** @type {{ code?: unknown, message?: string }} */ (body.error);
        const code = String(e.code ?? '');
        const kind = code === '401' || code === '403' || code === 'invalid_api_key' ? 'auth' : code === '429' || code === 'rate_limit_exceeded' ? 'rate_limit' : 'http';
        throw new LLMError(kind, e.message || 'the provider reported an error without a message');
      }
      const choice = body?.choices?.[0];
      if (!choice) throw new LLMError('invalid', `the answer has no choices: ${JSON.stringify(body).slice(0, 200)}`);
      /** @type {{ content?: unknown, tool_calls?: unknown }} */
      const msg = choice.message ?? {};
      /** @type {import('./client.js').Answer} */
      const out = { content: contentText(msg.content), usage: { input_tokens: body.usage?.prompt_tokens ?? 0, output_tokens: body.usage?.completion_tokens ?? 0 } };
      if (body.model) out.model = body.model;
      if (Array.isArray(msg.tool_calls) && msg.tool_calls.length) {
        out.tool_calls = msg.tool_calls.map((tc, i) => {
          const args = tc.function?.arguments;
          // Some servers send the arguments object itself.
          return { id: tc.id || `call_${i}`, name: tc.function?.name ?? '', arguments: typeof args === 'string' ? args : args == null ? '' : JSON.stringify(args) };
        });
      }
      if (!out.content && !out.tool_calls) {
        throw new LLMError('invalid', `the answer has neither content nor tool calls (finish reason ${JSON.stringify(choice.finish_reason ?? '')})`);
      }
      return out;
    },
    errorMessage(body) {
      const e = body?.error;
      if (typeof e === 'string') return e; // Ollama: {"error": "model not found"}
      return typeof e?.message === 'string' ? e.message : '';
    },
  };
}

/**
 * A message's content: a string, null, or (from some proxies) a list of parts whose text parts are joined.
 *
 * @param {unknown} content
 * @returns {string}
 */
function contentText(content) {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter((p) => p?.type === 'text').map((p) => p.text ?? '').join('');
  throw new LLMError('invalid', `content is neither text nor a list of parts: ${JSON.stringify(content).slice(0, 100)}`);
}
