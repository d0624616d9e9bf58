// `arbor mcp --http` as agents reach it: the official TypeScript SDK's
// clients (@modelcontextprotocol/sdk) against the built binary, on one
// server. Two clients see each other's writes, a subscribed client is
// told of a change, the prompts and resources answer, and requests
// without the token or from a foreign origin are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repoRoot, 'bin/arbor');
const skip = fs.existsSync(bin) ? false : 'bin/arbor is missing: run ./build.sh cli';
const token = 'tok-' + Math.random().toString(36).slice(2);

/** Starts the server on a copy of examples/notes and resolves its URL once it listens. */
async function startServer(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mcp-http-'));
  fs.cpSync(path.join(repoRoot, 'examples/notes'), root, { recursive: true });
  execFileSync(bin, ['--root', root, 'init'], { stdio: 'ignore' });
  const child = spawn(bin, ['--root', root, 'mcp', '--http', '127.0.0.1:0'], {
    env: { ...process.env, ARBOR_MCP_TOKEN: token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    fs.rmSync(root, { recursive: true, force: true });
  });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (b) => {
      log += b;
      const m = /on (http:\/\/\S+) \(token/.exec(log);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`arbor mcp --http exited (${code}): ${log}`)));
  });
  return { url, child, root };
}

async function connect(url, name) {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

function curate(client, operations) {
  return client.callTool({ name: 'arbor-curate', arguments: { operations } });
}

/** A raw POST of an initialize request with the given headers: its status. */
function rawPost(url, headers) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const req = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('two TypeScript SDK clients share one memory over Streamable HTTP', { skip, timeout: 120_000 }, async (t) => {
  const { url, child } = await startServer(t);
  const a = await connect(url, 'agent-a');
  const b = await connect(url, 'agent-b');

  const uri = 'arbor://engineering/billing/invoice_retry_policy.md';
  const updated = [];
  let notify;
  b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
    notify?.();
  });
  await b.subscribeResource({ uri });
  const heard = new Promise((resolve) => { notify = resolve; });

  // a writes; b is told, and reads a's write at once.
  const res = await curate(a, [{
    type: 'UPSERT', path: 'engineering/billing', title: 'Invoice retry policy',
    summary: 'three retries at +1, +3, +7 days', content: { narrative: 'Failed invoices are retried three times, then escalated.' },
    reason: 'agreed in the billing sync',
  }]);
  assert.equal(res.isError, undefined, JSON.stringify(res));
  await heard;
  assert.ok(updated.includes(uri), `notified of ${updated}`);
  const read = await b.callTool({ name: 'arbor-read', arguments: { path: 'engineering/billing/invoice_retry_policy.md' } });
  assert.match(read.structuredContent.markdown, /retried three times/);
  const resource = await b.readResource({ uri });
  assert.equal(resource.contents[0].mimeType, 'text/markdown');
  assert.match(resource.contents[0].text, /retried three times/);

  // b writes; a finds it.
  await curate(b, [{ type: 'ADD', path: 'engineering/billing', title: 'Dunning emails',
    content: { narrative: 'A reminder email goes out after each failed retry.' }, reason: 'from the support handbook' }]);
  const found = await a.callTool({ name: 'arbor-search', arguments: { query: 'reminder email failed retry' } });
  assert.equal(found.structuredContent.results[0].path, 'engineering/billing/dunning_emails.md');
  const listed = await a.listResources();
  assert.ok(listed.resources.some((r) => r.uri === 'arbor://engineering/billing/dunning_emails.md'));

  // The prompts work as they are.
  const prompts = (await a.listPrompts()).prompts.map((p) => p.name).sort();
  assert.deepEqual(prompts, ['arbor-recall', 'arbor-record', 'arbor-tidy']);
  const recall = await a.getPrompt({ name: 'arbor-recall', arguments: { topic: 'invoice retries' } });
  assert.equal(recall.messages[1].content.type, 'resource');
  assert.equal(recall.messages[1].content.resource.uri, uri);

  // No token, a wrong one, a foreign origin: refused; the token alone: served.
  assert.equal(await rawPost(url, {}), 401);
  assert.equal(await rawPost(url, { Authorization: 'Bearer wrong' }), 401);
  assert.equal(await rawPost(url, { Authorization: `Bearer ${token}`, Origin: 'https://evil.example.com' }), 403);
  assert.equal(await rawPost(url, { Authorization: `Bearer ${token}` }), 200);

  await a.close();
  await b.close();
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
});
