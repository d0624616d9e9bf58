// The fetch-based model adapters against the scripted server
// (tests/llm/scripted-server.mjs): the same cases as host/llm's Go tests.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { openaiCompatible, anthropic, adapterFromEnv, LLMError } from '../llm/index.js';
import { startScriptedServer } from '../../../tests/llm/scripted-server.mjs';
import { defer } from './_engine.mjs';

const KEY = 'sk-test-0123456789';

/** Starts a server and an adapter of `provider` on it; `waits` records the backoff instead of sleeping. */
async function setup(t, provider, steps, options = {}) {
  const srv = await startScriptedServer(steps, options.server);
  defer(t, () => srv.close());
  const waits = [];
  const retries = [];
  const make = provider === 'anthropic' ? anthropic : openaiCompatible;
  const llm = make({
    provider: provider === 'anthropic' ? undefined : provider,
    baseURL: provider === 'anthropic' ? srv.url : `${srv.url}/v1`,
    model: 'test-model',
    apiKey: KEY,
    sleep: async (ms, signal) => {
      waits.push(ms);
      signal?.throwIfAborted();
    },
    onRetry: (r) => retries.push(r),
    ...options.adapter,
  });
  return { srv, llm, waits, retries };
}

const conversation = {
  messages: [
    { role: 'system', content: 'Answer only from the tree.' },
    { role: 'user', content: 'How often are invoices retried?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'search_knowledge', arguments: '{"query":"invoice retry"}' }] },
    { role: 'tool', content: 'engineering/billing/invoice_retry_policy.md: retried three times', tool_call_id: 'call_1' },
  ],
  tools: [{ name: 'read_entry', description: 'Read one entry', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
  max_tokens: 2048,
  temperature: 0.5,
};

const toolReply = [{
  reply: {
    tool_calls: [{ id: 'call_2', name: 'read_entry', arguments: { path: 'engineering/billing/invoice_retry_policy.md' } }],
    usage: { input_tokens: 321, output_tokens: 17 }, model: 'scripted-1',
  },
}];
const wantCalls = [{ id: 'call_2', name: 'read_entry', arguments: '{"path":"engineering/billing/invoice_retry_policy.md"}' }];

const hello = { messages: [{ role: 'user', content: 'hello' }], max_tokens: 64, temperature: 0.3 };

test('OpenAI-compatible: tool calls both ways', async (t) => {
  const { srv, llm } = await setup(t, 'openrouter', toolReply, { adapter: { headers: { 'x-title': 'arbor' } } });
  const res = await llm.complete(conversation);
  assert.deepEqual(res.tool_calls, wantCalls);
  assert.equal(res.content, '');
  assert.deepEqual(res.usage, { input_tokens: 321, output_tokens: 17 });
  assert.equal(res.model, 'scripted-1');
  assert.ok(res.latency_ms > 0);

  assert.equal(srv.requests.length, 1);
  const { path, headers, body } = srv.requests[0];
  assert.equal(path, '/v1/chat/completions');
  assert.equal(headers.authorization, `Bearer ${KEY}`);
  assert.equal(headers['x-title'], 'arbor');
  assert.equal(body.model, 'test-model');
  assert.equal(body.max_tokens, 2048);
  assert.equal(body.temperature, 0.5);
  assert.deepEqual(body.messages[2], {
    role: 'assistant', content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search_knowledge', arguments: '{"query":"invoice retry"}' } }],
  });
  assert.deepEqual(body.messages[3], { role: 'tool', content: conversation.messages[3].content, tool_call_id: 'call_1' });
  assert.deepEqual(body.tools, [{ type: 'function', function: conversation.tools[0] }]);
});

test('OpenAI itself gets max_completion_tokens', async (t) => {
  const { srv, llm } = await setup(t, 'openai', [{ reply: { content: 'ok' } }]);
  await llm.complete({ ...hello, max_tokens: 1024 });
  assert.equal(srv.requests[0].body.max_completion_tokens, 1024);
  assert.equal(srv.requests[0].body.max_tokens, undefined);
});

test('Anthropic: system split out, tool_use and tool_result blocks, headers', async (t) => {
  const { srv, llm } = await setup(t, 'anthropic', toolReply, { adapter: { browser: false } });
  const req = { ...conversation, messages: [...conversation.messages, { role: 'user', content: 'Be brief.' }] };
  const res = await llm.complete(req);
  assert.deepEqual(res.tool_calls, wantCalls);
  assert.deepEqual(res.usage, { input_tokens: 321, output_tokens: 17 });

  const { path, headers, body } = srv.requests[0];
  assert.equal(path, '/v1/messages');
  assert.equal(headers['x-api-key'], KEY);
  assert.equal(headers['anthropic-version'], '2023-06-01');
  assert.equal(headers.authorization, undefined);
  assert.equal(headers['anthropic-dangerous-direct-browser-access'], undefined);
  assert.equal(body.system, 'Answer only from the tree.');
  assert.equal(body.max_tokens, 2048);
  assert.deepEqual(body.messages.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.deepEqual(body.messages[1].content, [{ type: 'tool_use', id: 'call_1', name: 'search_knowledge', input: { query: 'invoice retry' } }]);
  assert.deepEqual(body.messages[2].content, [
    { type: 'tool_result', tool_use_id: 'call_1', content: conversation.messages[3].content },
    { type: 'text', text: 'Be brief.' },
  ]);
  assert.deepEqual(body.tools, [{ name: 'read_entry', description: 'Read one entry', input_schema: conversation.tools[0].parameters }]);
});

test('Anthropic replays malformed arguments as {}', async (t) => {
  const { srv, llm } = await setup(t, 'anthropic', [{ reply: { content: 'done' } }]);
  const res = await llm.complete({
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'read_entry', arguments: '{"path": ' }] },
      { role: 'tool', content: 'error: arguments are not valid JSON', tool_call_id: 'c1' },
    ],
    max_tokens: 100, temperature: 0,
  });
  assert.equal(res.content, 'done');
  assert.deepEqual(srv.requests[0].body.messages[1].content[0].input, {});
});

for (const provider of ['openai-compatible', 'anthropic']) {
  test(`${provider}: HTTP 500 then 529 then success, with exponential backoff`, async (t) => {
    const { srv, llm, waits, retries } = await setup(t, provider, [{ status: 500, message: 'upstream exploded' }, { status: 529 }, { reply: { content: 'fine' } }],
      { adapter: { backoff: { baseMs: 1000, maxMs: 8000 } } });
    const res = await llm.complete(hello);
    assert.equal(res.content, 'fine');
    assert.equal(srv.requests.length, 3);
    assert.deepEqual(retries.map((r) => [r.status, r.retryAfter]), [[500, false], [529, false]]);
    assert.match(retries[0].reason, /upstream exploded/);
    assert.ok(waits[0] >= 500 && waits[0] <= 1000 && waits[1] >= 1000 && waits[1] <= 2000, `waits ${waits}`);
  });

  test(`${provider}: 429 honours Retry-After`, async (t) => {
    const { srv, llm, waits, retries } = await setup(t, provider, [{ status: 429, retry_after: '7' }, { status: 429, retry_after: '0.25' }, { reply: { content: 'after the wait' } }]);
    const res = await llm.complete(hello);
    assert.equal(res.content, 'after the wait');
    assert.equal(srv.requests.length, 3);
    assert.deepEqual(waits, [7000, 250]);
    assert.ok(retries.every((r) => r.retryAfter && r.status === 429));
  });

  test(`${provider}: a refused key is an auth error, not retried, and never printed`, async (t) => {
    const { srv, llm } = await setup(t, provider, [{ reply: { content: 'unreachable' } }], {
      server: { requireKey: KEY }, adapter: { apiKey: 'sk-wrong-key-42' },
    });
    const err = await llm.complete(hello).catch((e) => e);
    assert.ok(err instanceof LLMError, String(err));
    assert.equal(err.code, 'auth');
    assert.equal(err.status, 401);
    assert.equal(err.attempts, 1);
    assert.doesNotMatch(err.message, /sk-wrong-key-42/);
    assert.equal(srv.requests.length, 1);
    assert.equal(srv.remaining(), 1);
  });

  test(`${provider}: timeout, retried once`, async (t) => {
    const { srv, llm, waits } = await setup(t, provider, [{ delay_ms: 10000, reply: { content: 'late' } }, { delay_ms: 10000, reply: { content: 'late' } }],
      { adapter: { timeoutMs: 400, maxRetries: 1 } });
    const err = await llm.complete(hello).catch((e) => e);
    assert.equal(err.code, 'timeout', err.message);
    assert.equal(err.attempts, 2);
    assert.equal(srv.requests.length, 2);
    assert.equal(waits.length, 1);
  });
}

test('rate limit: gives up after the retries', async (t) => {
  const { srv, llm, waits } = await setup(t, 'groq', [{ status: 429 }, { status: 429 }, { status: 429 }], { adapter: { maxRetries: 2 } });
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'rate_limit');
  assert.equal(err.attempts, 3);
  assert.equal(srv.requests.length, 3);
  assert.equal(waits.length, 2);
});

test('a Retry-After longer than the longest wait is not waited for', async (t) => {
  const { srv, llm, waits } = await setup(t, 'openai', [{ status: 429, retry_after: '3600' }, { reply: { content: 'never' } }]);
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'rate_limit');
  assert.match(err.message, /asked to wait 3600s/);
  assert.equal(srv.requests.length, 1);
  assert.deepEqual(waits, []);
});

test('a server echoing the key is redacted', async (t) => {
  const { llm } = await setup(t, 'openai', [{ status: 403, message: `Incorrect API key provided: ${KEY}` }]);
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'auth');
  assert.doesNotMatch(err.message, new RegExp(KEY));
  assert.match(err.message, /\[redacted\]/);
});

test('garbage and invalid JSON are invalid, not retried', async (t) => {
  const cases = [
    ['<html><body>502 Bad Gateway</body></html>', /could not be decoded/],
    ['{"choices":[{"message":', /could not be decoded/],
    ['', /could not be decoded/],
    ['{"id":"x","choices":[]}', /no choices/],
    ['[1,2,3]', /no choices/],
    ['{"choices":[{"message":{"content":null},"finish_reason":"length"}]}', /neither content nor tool calls/],
    ['{"choices":[{"message":{"content":42}}]}', /neither text nor a list of parts/],
  ];
  for (const [raw, want] of cases) {
    const { srv, llm } = await setup(t, 'vllm', [{ raw }, { reply: { content: 'unused' } }]);
    const err = await llm.complete(hello).catch((e) => e);
    assert.equal(err.code, 'invalid', `${raw}: ${err.message}`);
    assert.match(err.message, want);
    assert.equal(srv.requests.length, 1);
  }
  for (const raw of ['"not an object"', '{"type":"completion","completion":"hi"}', '{"type":"message","content":[]}']) {
    const { llm } = await setup(t, 'anthropic', [{ raw }]);
    assert.equal((await llm.complete(hello).catch((e) => e)).code, 'invalid', raw);
  }
});

test('an error inside a 200 body (OpenRouter)', async (t) => {
  const { llm } = await setup(t, 'openrouter', [{ raw: '{"error":{"message":"No auth credentials found","code":401}}' }]);
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'auth');
  assert.match(err.message, /No auth credentials found/);
});

test('client errors are not retried; Ollama-style error strings are read', async (t) => {
  const { srv, llm } = await setup(t, 'ollama', [{ status: 404, raw: '{"error":"model \\"llama9\\" not found"}' }, { reply: { content: 'x' } }]);
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'http');
  assert.match(err.message, /model "llama9" not found/);
  assert.equal(srv.requests.length, 1);
});

test('cancel during the request and during the backoff', async (t) => {
  const { srv, llm } = await setup(t, 'openai', [{ delay_ms: 10000, reply: { content: 'late' } }]);
  const ctl = new AbortController();
  const pending = llm.complete(hello, { signal: ctl.signal });
  while (srv.requests.length === 0) await new Promise((r) => setTimeout(r, 1));
  ctl.abort();
  const err = await pending.catch((e) => e);
  assert.equal(err.code, 'cancelled');
  assert.equal(srv.requests.length, 1);

  const ctl2 = new AbortController();
  const { srv: srv2, llm: llm2 } = await setup(t, 'openai', [{ status: 503 }, { reply: { content: 'never asked' } }], {
    adapter: { sleep: undefined, backoff: { baseMs: 3_600_000, maxMs: 3_600_000 }, onRetry: () => ctl2.abort() },
  });
  const err2 = await llm2.complete(hello, { signal: ctl2.signal }).catch((e) => e);
  assert.equal(err2.code, 'cancelled');
  assert.equal(srv2.requests.length, 1);

  const err3 = await llm2.complete(hello, { signal: AbortSignal.abort() }).catch((e) => e);
  assert.equal(err3.code, 'cancelled');
  assert.equal(srv2.requests.length, 1, 'an aborted signal sends nothing');
});

test('connection refused is retried, then an http error', async (t) => {
  const srv = await startScriptedServer([]);
  await srv.close();
  const waits = [];
  const llm = openaiCompatible({ provider: 'lmstudio', baseURL: `${srv.url}/v1`, model: 'm', maxRetries: 2, sleep: async (ms) => waits.push(ms) });
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'http');
  assert.equal(err.attempts, 3);
  assert.equal(waits.length, 2);
});

test('the script running out is reported', async (t) => {
  const { llm } = await setup(t, 'openai', []);
  const err = await llm.complete(hello).catch((e) => e);
  assert.equal(err.code, 'http');
  assert.match(err.message, /script has run out/);
});

test('adapter options are checked', () => {
  assert.throws(() => openaiCompatible({ provider: 'openai', model: 'm' }), /needs an apiKey/);
  assert.throws(() => openaiCompatible({ provider: 'ollama' }), /needs a model/);
  assert.throws(() => openaiCompatible({ provider: 'openai-compatible', model: 'm' }), /needs a baseURL/);
  assert.throws(() => openaiCompatible({ provider: 'vllm', model: 'm', baseURL: 'localhost:8000' }), /not an http\(s\) URL/);
  assert.throws(() => openaiCompatible({ provider: 'anthropic', model: 'm', apiKey: 'k' }), /unknown openai provider/);
  assert.equal(openaiCompatible({ baseURL: 'http://127.0.0.1:1/v1', model: 'm' }).provider, 'openai-compatible');
});

test('adapterFromEnv reads the Go host variables', () => {
  assert.equal(adapterFromEnv({}), null);
  assert.equal(adapterFromEnv({ OPENAI_API_KEY: 'sk' }), null, 'a key alone does not turn the LLM on');
  assert.equal(adapterFromEnv({ ARBOR_LLM_PROVIDER: 'none' }), null);
  const a = adapterFromEnv({ ARBOR_LLM_PROVIDER: 'Anthropic', ARBOR_LLM_MODEL: 'claude', ANTHROPIC_API_KEY: 'k' });
  assert.deepEqual([a.provider, a.model], ['anthropic', 'claude']);
  assert.throws(() => adapterFromEnv({ ARBOR_LLM_PROVIDER: 'gpt' }), /unknown provider "gpt"/);
  assert.throws(() => adapterFromEnv({ ARBOR_LLM_PROVIDER: 'groq', ARBOR_LLM_MODEL: 'm' }), /needs an apiKey/);
  assert.throws(() => adapterFromEnv({ ARBOR_LLM_PROVIDER: 'ollama', ARBOR_LLM_MODEL: 'm', ARBOR_LLM_TIMEOUT: 'soon' }), /ARBOR_LLM_TIMEOUT/);
});

test('adapterFromEnv: the configured adapter talks to the server', async (t) => {
  const srv = await startScriptedServer([{ reply: { content: 'from env' } }], { requireKey: 'k-arbor' });
  defer(t, () => srv.close());
  const llm = adapterFromEnv({
    ARBOR_LLM_PROVIDER: 'groq', ARBOR_LLM_BASE_URL: `${srv.url}/v1`, ARBOR_LLM_MODEL: 'llama',
    ARBOR_LLM_API_KEY: 'k-arbor', GROQ_API_KEY: 'k-groq', ARBOR_LLM_TIMEOUT: '2m', ARBOR_LLM_MAX_RETRIES: '0',
  });
  assert.equal((await llm.complete(hello)).content, 'from env');
});

test('content as a list of parts (some proxies) is read', async (t) => {
  const raw = '{"choices":[{"message":{"content":[{"type":"text","text":"Retried "},{"type":"image_url"},{"type":"text","text":"three times."}]}}]}';
  const { llm } = await setup(t, 'openai-compatible', [{ raw }]);
  assert.equal((await llm.complete(hello)).content, 'Retried three times.');
});
