// The Node scripted server answers the shared script exactly as the golden
// file says, which the Go server (host/llm/llmtest) is checked against too:
// one format, two servers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { startScriptedServer, checkScript } from './scripted-server.mjs';
import { script } from './fixture.mjs';

const golden = JSON.parse(readFileSync(new URL('./scripts/shapes.golden.json', import.meta.url), 'utf8'));

/** Sorts object keys, as Go's encoding/json writes a map. */
const canonical = (v) => (Array.isArray(v) ? v.map(canonical)
  : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])])) : v);

for (const [kind, path] of [['openai', '/v1/chat/completions'], ['anthropic', '/v1/messages']]) {
  test(`the ${kind} shapes match the Go server's`, async (t) => {
    const steps = script('shapes.json');
    const srv = await startScriptedServer(steps);
    t.after(() => srv.close());
    const got = [];
    for (const _ of steps) {
      const res = await fetch(srv.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m"}' });
      const text = await res.text();
      const a = { status: res.status };
      const ra = res.headers.get('retry-after');
      if (ra) a.retry_after = ra;
      try {
        a.json = canonical(JSON.parse(text));
      } catch {
        a.text = text;
      }
      got.push(a);
    }
    assert.deepEqual(got, golden[kind].map(canonical));
  });
}

test('requests are recorded; keys are checked; preflights are answered', async (t) => {
  const srv = await startScriptedServer([{ reply: { content: 'hi' } }], { requireKey: 'k' });
  t.after(() => srv.close());
  const post = (key) => fetch(`${srv.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{"n":1}' }).then((r) => r.status);
  assert.deepEqual([await post('wrong'), await post('k'), await post('k')], [401, 200, 418]);
  assert.deepEqual(srv.requests.map((r) => r.step), [-1, 0, -1]);
  assert.deepEqual(srv.requests[1].body, { n: 1 });
  const pre = await fetch(`${srv.url}/v1/chat/completions`, { method: 'OPTIONS' });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  // A browser's preflight for a keyed call: Authorization must be named, `*` does not cover it.
  const keyed = await fetch(`${srv.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { 'access-control-request-headers': 'authorization,content-type' } });
  assert.equal(keyed.headers.get('access-control-allow-headers'), 'authorization,content-type');
  assert.equal(srv.requests.length, 3);
});

test('script mistakes are refused', () => {
  for (const s of [{}, [{ reply: { content: 'x' }, delay: 5 }], [{ delay_ms: 5 }], [{ reply: { contnet: 'x' } }]]) {
    assert.throws(() => checkScript(s), TypeError, JSON.stringify(s));
  }
});
