// The Anthropic Messages API adapter: the system prompt is a field of its
// own, turns alternate between user and assistant, tool calls and their
// results are content blocks. Same mapping as host/llm in Go.

import { createAdapter } from './client.js';
import { LLMError } from './error.js';

/** The Messages API version the adapter speaks. */
const VERSION = '2023-06-01';

/** Anthropic requires an input schema, even for a tool without parameters. */
const EMPTY_SCHEMA = { type: 'object', properties: {} };

/** @typedef {import('./index.d.ts').AnthropicOptions} AnthropicOptions */

/**
 * A content block of a Messages API turn.
 *
 * @typedef {{ type: 'text', text: string }
 *   | { type: 'tool_use', id: string, name: string, input: object }
 *   | { type: 'tool_result', tool_use_id: string | undefined, content: string }} AnthropicBlock
 */

/**
 * A Messages API request body.
 *
 * @typedef {object} AnthropicRequest
 * @property {string} model
 * @property {{ role: 'user' | 'assistant', content: AnthropicBlock[] }[]} messages
 * @property {number} max_tokens
 * @property {number} temperature
 * @property {string} [system]
 * @property {{ name: string, description: string, input_schema: object }[]} [tools]
 */

/**
 * A Messages API answer, as far as it is read; decode checks what it uses.
 *
 * @typedef {object} AnthropicBody
 * @property {string} [type]
 * @property {{ type?: string, text?: string, id?: string, name?: string, input?: unknown }[]} [content]
 * @property {{ input_tokens?: number, output_tokens?: number }} [usage]
 * @property {string} [model]
 * @property {string | null} [stop_reason]
 * @property {{ type?: string, message?: string }} [error]
 */

/**
 * A default of {} keeps the "needs a model" TypeError for a JS caller who
 * passes nothing (cast: the declaration requires options).
 *
 * @type {typeof import('./index.d.ts').anthropic}
 */
export function anthropic(options = /** @type {AnthropicOptions} */ ({})) {
  const { browser = !globalThis.process?.versions?.node } = options;
  return createAdapter(anthropicFormat(browser), { ...options, provider: 'anthropic' });
}

/**
 * @param {boolean} browser send the header without which the API refuses a page's requests
 * @returns {import('./client.js').WireFormat<AnthropicBody>}
 */
function anthropicFormat(browser) {
  return {
    name: 'anthropic',
    endpoint: (base) => `${base}/v1/messages`,
    headers(key) {
      /** @type {Record<string, string>} */
      const h = { 'anthropic-version': VERSION };
      if (key) h['x-api-key'] = key;
      // Without it the API refuses cross-origin requests from a page.
      if (browser) h['anthropic-dangerous-direct-browser-access'] = 'true';
      return h;
    },
    encode(model, req) {
      /** @type {string[]} */
      const system = [];
      /** @type {AnthropicRequest['messages']} */
      const messages = [];
      for (const m of req.messages) {
        /** @type {'user' | 'assistant'} */
        let role;
        /** @type {AnthropicBlock[]} */
        let blocks;
        if (m.role === 'system') {
          system.push(m.content);
          continue;
        } else if (m.role === 'tool') {
          role = 'user';
          blocks = [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content }];
        } else if (m.role === 'assistant') {
          role = 'assistant';
          blocks = [];
          if (m.content) blocks.push({ type: 'text', text: m.content });
          for (const tc of m.tool_calls ?? []) blocks.push({ type: 'tool_use', id: tc.id, name: tc.name, input: toolInput(tc.arguments) });
        } else if (m.role === 'user') {
          role = 'user';
          blocks = [{ type: 'text', text: m.content }];
        } else {
          throw new Error(`message role ${JSON.stringify(m.role)} is not one of system, user, assistant, tool`);
        }
        if (!blocks.length) continue;
        // Turns must alternate: a tool's results and the user's next words are one user turn.
        const last = messages.at(-1);
        if (last?.role === role) last.content.push(...blocks);
        else messages.push({ role, content: blocks });
      }
      /** @type {AnthropicRequest} */
      const body = { model, messages, max_tokens: req.max_tokens, temperature: req.temperature };
      if (system.length) body.system = system.join('\n\n');
      if (req.tools?.length) {
        body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters ?? EMPTY_SCHEMA }));
      }
      return body;
    },
    decode(body) {
      if (body?.type !== 'message') throw new LLMError('invalid', `the answer is not a message: ${JSON.stringify(body).slice(0, 200)}`);
      /** @type {(string | undefined)[]} */
      const text = [];
      /** @type {import('./index.d.ts').LLMToolCall[]} */
      const calls = [];
      for (const b of body.content ?? []) {
        if (b.type === 'text') text.push(b.text);
        // Cast: a tool_use block has an id and a name (the API's contract).
        else if (b.type === 'tool_use') calls.push({ id: /** @type {string} */ (b.id), name: /** @type {string} */ (b.name), arguments: b.input === undefined ? '{}' : JSON.stringify(b.input) });
      }
      /** @type {import('./client.js').Answer} */
      const out = { content: text.join(''), usage: { input_tokens: body.usage?.input_tokens ?? 0, output_tokens: body.usage?.output_tokens ?? 0 } };
      if (body.model) out.model = body.model;
      if (calls.length) out.tool_calls = calls;
      if (!out.content && !calls.length) throw new LLMError('invalid', `the answer has neither text nor tool calls (stop reason ${JSON.stringify(body.stop_reason ?? '')})`);
      return out;
    },
    errorMessage(body) {
      const e = body?.error;
      return e?.message ? `${e.type}: ${e.message}` : '';
    },
  };
}

/**
 * A call's arguments as Anthropic takes them: a JSON object. Arguments
 * that are not one (a malformed call the engine already answered with an
 * error) are replayed as {}, since the API refuses anything else.
 *
 * @param {string} args
 * @returns {object}
 */
function toolInput(args) {
  try {
    const v = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    // fall through
  }
  return {};
}
