// The Anthropic Messages API adapter: the system prompt is a field of its
// own, turns alternate between user and assistant, tool calls and their
// results are content blocks. Same mapping as host/llm in Go.

import { createAdapter } from './client.js';
import { LLMError } from './error.js';

/** The Messages API version the adapter speaks. */
const VERSION = '2023-06-01';

/** Anthropic requires an input schema, even for a tool without parameters. */
const EMPTY_SCHEMA = { type: 'object', properties: {} };

/**
 * @param {import('./index.d.ts').AnthropicOptions} options
 * @returns {import('./index.d.ts').LLMAdapter}
 */
export function anthropic(options = {}) {
  const { browser = !globalThis.process?.versions?.node } = options;
  return createAdapter(anthropicFormat(browser), { ...options, provider: 'anthropic' });
}

function anthropicFormat(browser) {
  return {
    name: 'anthropic',
    endpoint: (base) => `${base}/v1/messages`,
    headers(key) {
      const h = { 'anthropic-version': VERSION };
      if (key) h['x-api-key'] = key;
      // Without it the API refuses cross-origin requests from a page.
      if (browser) h['anthropic-dangerous-direct-browser-access'] = 'true';
      return h;
    },
    encode(model, req) {
      const system = [];
      const messages = [];
      for (const m of req.messages) {
        let role;
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
      const body = { model, messages, max_tokens: req.max_tokens, temperature: req.temperature };
      if (system.length) body.system = system.join('\n\n');
      if (req.tools?.length) {
        body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters ?? EMPTY_SCHEMA }));
      }
      return body;
    },
    decode(body) {
      if (body?.type !== 'message') throw new LLMError('invalid', `the answer is not a message: ${JSON.stringify(body).slice(0, 200)}`);
      const text = [];
      const calls = [];
      for (const b of body.content ?? []) {
        if (b.type === 'text') text.push(b.text);
        else if (b.type === 'tool_use') calls.push({ id: b.id, name: b.name, arguments: b.input === undefined ? '{}' : JSON.stringify(b.input) });
      }
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
