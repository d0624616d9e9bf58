// A scripted model server for the JS tests: the Node twin of the Go
// package host/llm/llmtest, reading the same script format (documented
// there). It listens on 127.0.0.1 with a free port, answers OpenAI-style
// chat completions (…/chat/completions) and Anthropic messages
// (…/v1/messages) one scripted step per request, and records every
// request (CORS preflights answered, not recorded).
//
//   const srv = await startScriptedServer([{ reply: { content: 'hi' } }]);
//   // srv.url + '/v1' is an OpenAI-compatible base URL, srv.url an Anthropic one
//   srv.requests  // [{ step, path, headers, body }]
//   await srv.close();
//
// It also answers OpenAI-compatible embeddings (…/embeddings) as the Go
// server does: each input's hashed bag of words (hashedWords, the twin of
// core/host.HashedWords) in 64 dimensions, model "hashed-bow", unless a
// step pushed with pushEmbed says otherwise (`dims` answers the hashed
// vectors in that many dimensions; status, raw, delay_ms as above).
//
// Run as a script it serves a script file until interrupted, for trying
// the CLI or a page by hand:
//
//   node tests/llm/scripted-server.mjs script.json

import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const stepKeys = new Set(['reply', 'status', 'message', 'retry_after', 'raw', 'delay_ms']);
const replyKeys = new Set(['content', 'tool_calls', 'usage', 'model']);
const callKeys = new Set(['id', 'name', 'arguments']);

function onlyKeys(obj, keys, where) {
  for (const k of Object.keys(obj ?? {})) {
    if (!keys.has(k)) throw new TypeError(`scripted server: ${where}: unknown field ${JSON.stringify(k)}`);
  }
}

/**
 * Checks a script (an array of steps) as the Go server does: unknown
 * fields are refused, every step answers somehow.
 *
 * @param {unknown} steps
 * @returns {object[]}
 */
export function checkScript(steps) {
  if (!Array.isArray(steps)) throw new TypeError('scripted server: a script is a JSON array of steps');
  steps.forEach((s, i) => {
    onlyKeys(s, stepKeys, `step ${i}`);
    onlyKeys(s.reply, replyKeys, `step ${i}: reply`);
    (s.reply?.tool_calls ?? []).forEach((tc, j) => onlyKeys(tc, callKeys, `step ${i}: tool call ${j}`));
    if (s.reply === undefined && s.status === undefined && s.raw === undefined) {
      throw new TypeError(`scripted server: script step ${i} has no reply, status or raw body`);
    }
  });
  return steps;
}

/**
 * Starts a server answering from `steps`.
 *
 * @param {object[]} steps
 * @param {{ requireKey?: string }} [options] refuse with 401 (using no step) any request without this key
 */
export async function startScriptedServer(steps = [], { requireKey } = {}) {
  const script = [...checkScript(steps)];
  let next = 0;
  /** @type {{ step: number, path: string, headers: Record<string, string | string[] | undefined>, body: any, raw: string }[]} */
  const requests = [];
  const open = new Set();
  /** @type {object[]} the embedding requests' script, consumed from the front */
  const embedScript = [];

  const server = createServer(async (req, res) => {
    // Pages on another origin (the browser tests) may call it. The
    // preflight's headers are echoed rather than allowed with `*`, which
    // the Fetch standard says does not cover Authorization.
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*', 'access-control-allow-methods': 'POST' }).end();
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'POST' && req.url.endsWith('/embeddings')) {
      await serveEmbed(req, res, raw, embedScript, requests, requireKey);
      return;
    }
    const anthropic = req.url.endsWith('/messages');
    if (req.method !== 'POST' || !(anthropic || req.url.endsWith('/chat/completions'))) {
      res.writeHead(404).end('scripted server: POST …/chat/completions or …/v1/messages');
      return;
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const record = { step: -1, path: req.url, headers: req.headers, body, raw };
    requests.push(record);
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    let step;
    if (requireKey !== undefined && key !== requireKey) {
      step = { status: 401, message: 'invalid x-api-key or bearer token' };
    } else if (next < script.length) {
      record.step = next;
      step = script[next++];
    } else {
      step = { status: 418, message: `scripted server: the script has run out (request ${requests.length})` };
    }
    const headers = await prelude(step, res);
    if (!headers) return;
    const status = step.status ?? 200;
    let out;
    if (step.raw !== undefined) out = step.raw;
    else if (step.reply !== undefined) out = JSON.stringify(render(step.reply, record.step, anthropic));
    else out = JSON.stringify(errorBody(status, step.message, anthropic));
    res.writeHead(status, headers).end(out);
  });
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** Appends steps to the script. */
    push: (...more) => script.push(...checkScript(more)),
    /** Appends steps to the embedding requests' script. */
    pushEmbed: (...more) => embedScript.push(...more),
    /** Counts the steps not used yet. */
    remaining: () => script.length - next,
    close: () =>
      new Promise((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A scripted call's arguments as JSON text: a string as it is, anything else as compact JSON. */
function argumentsText(args) {
  if (typeof args === 'string') return args;
  return args === undefined ? '{}' : JSON.stringify(args);
}

function render(reply, step, anthropic) {
  const model = reply.model ?? 'scripted';
  const usage = { input_tokens: reply.usage?.input_tokens ?? 0, output_tokens: reply.usage?.output_tokens ?? 0 };
  const calls = (reply.tool_calls ?? []).map((tc, i) => ({ id: tc.id ?? `call_${step}_${i}`, name: tc.name, args: argumentsText(tc.arguments) }));
  if (anthropic) {
    const content = [];
    if (reply.content) content.push({ type: 'text', text: reply.content });
    for (const c of calls) {
      let input;
      try {
        input = JSON.parse(c.args);
      } catch {
        input = c.args;
      }
      content.push({ type: 'tool_use', id: c.id, name: c.name, input });
    }
    return {
      id: `msg_${step}`, type: 'message', role: 'assistant', model, content,
      stop_reason: calls.length ? 'tool_use' : 'end_turn', usage,
    };
  }
  const message = { role: 'assistant', content: reply.content ? reply.content : null };
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
  }
  return {
    id: `chatcmpl-${step}`, object: 'chat.completion', model,
    choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: usage.input_tokens + usage.output_tokens },
  };
}

const errorKinds = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error',
  429: 'rate_limit_error', 529: 'overloaded_error',
};

function errorBody(status, message = `scripted HTTP ${status}`, anthropic) {
  const type = errorKinds[status] ?? 'api_error';
  return anthropic ? { type: 'error', error: { type, message } } : { error: { message, type, code: status } };
}

/**
 * The hashed bag of words of text in dims buckets, as core/host.HashedWords
 * computes it: each word (a run of letters and digits, lower-cased) adds ±1
 * to the bucket of its FNV-1a hash, the sign from the hash's top bit.
 *
 * @param {string} text
 * @param {number} [dims]
 * @returns {number[]}
 */
export function hashedWords(text, dims = 64) {
  const v = new Array(dims).fill(0);
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 0x811c9dc5;
    for (const b of new TextEncoder().encode(w)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    v[h % dims] += h >>> 31 ? -1 : 1;
  }
  return v;
}

/**
 * Waits out a step's delay and returns its headers, or null when the
 * client went away first.
 */
async function prelude(step, res) {
  if (step.delay_ms > 0) {
    const gone = await new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), step.delay_ms);
      res.on('close', () => {
        clearTimeout(t);
        resolve(true);
      });
    });
    if (gone) return null;
  }
  const headers = { 'content-type': 'application/json' };
  if (step.retry_after !== undefined) headers['retry-after'] = String(step.retry_after);
  return headers;
}

async function serveEmbed(req, res, raw, embedScript, requests, requireKey) {
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  requests.push({ step: -1, path: req.url, headers: req.headers, body, raw });
  const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
  let step = {};
  if (requireKey !== undefined && key !== requireKey) step = { status: 401, message: 'invalid x-api-key or bearer token' };
  else if (embedScript.length > 0) step = embedScript.shift();
  const headers = await prelude(step, res);
  if (!headers) return;
  let status = step.status ?? 200;
  let out;
  if (step.raw !== undefined) out = step.raw;
  else if (status !== 200) out = JSON.stringify(errorBody(status, step.message, false));
  else if (!Array.isArray(body?.input)) {
    status = 400;
    out = JSON.stringify(errorBody(400, 'scripted server: the body is not {"input": [strings]}', false));
  } else {
    const data = body.input.map((t, i) => ({ object: 'embedding', index: i, embedding: hashedWords(t, step.dims || 64) }));
    out = JSON.stringify({ object: 'list', model: 'hashed-bow', data, usage: { prompt_tokens: 0, total_tokens: 0 } });
  }
  res.writeHead(status, headers).end(out);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node tests/llm/scripted-server.mjs SCRIPT.json');
    process.exit(2);
  }
  const srv = await startScriptedServer(JSON.parse(await readFile(file, 'utf8')));
  console.log(`OpenAI-compatible base URL: ${srv.url}/v1`);
  console.log(`Anthropic base URL:         ${srv.url}`);
  process.on('SIGINT', async () => {
    console.error(`${srv.requests.length} requests, ${srv.remaining()} steps left`);
    await srv.close();
    process.exit(0);
  });
}
