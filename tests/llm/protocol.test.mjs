// The pending/resume protocol of docs/ABI.md §6 through Node: dist/arbor.wasm
// under the JS package's raw request path and WASI shim, over a real
// folder, with a scripted model (no LLM anywhere). The await loop of the JS
// API is tested with the bindings; this checks the engine's side of the
// wire as a JS host sees it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEngine, nodeFs } from 'arbor-memory';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmPath = path.resolve(here, '../../dist/arbor.wasm');
const skip = fs.existsSync(wasmPath) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

const tree = {
  'engineering/billing/invoice_retry_policy.md':
    '---\ntitle: Invoice retry policy\nsummary: failed invoices are retried three times, then escalated\n---\n\n## Narrative\nFailed invoices are retried three times, then escalated to the billing lead.\n',
  'operations/oncall/escalation.md':
    '---\ntitle: On-call escalation\nsummary: the billing lead is paged after the third failed invoice retry\n---\n\n## Narrative\nWhen an invoice fails its third retry, the on-call engineer pages the billing lead.\n',
  'engineering/payments/card_retries.md':
    '---\ntitle: Card retries\nsummary: failed card payments are retried after an hour and a day\n---\n\n## Narrative\nFailed card payments are retried after one hour, then one day.\n',
};

async function open(t, llm) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-llm-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [p, c] of Object.entries(tree)) {
    fs.mkdirSync(path.join(dir, path.dirname(p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), c);
  }
  const engine = await startEngine({ storage: nodeFs(dir), wasm: wasmPath });
  t.after(() => engine.dispose());
  let id = 0;
  const call = async (method, params) => JSON.parse(await engine.request(JSON.stringify({ id: ++id, method, params })));
  const opened = await call('open', { fixedTime: llm ? undefined : '2026-01-01T00:00:00Z', llm });
  assert.ok(opened.result, JSON.stringify(opened));
  return { dir, call };
}

/** Runs method to its final result, answering each pending step with script[step-1]. */
async function drive(call, method, params, script) {
  const requests = [];
  let resp = await call(method, params);
  while (resp.result?.status === 'pending') {
    const { continuation, step, llm } = resp.result;
    assert.match(continuation, /^c_[0-9a-f]{32}$/);
    assert.equal(step, requests.length + 1);
    requests.push(llm);
    assert.ok(step <= script.length, `step ${step} was not scripted`);
    resp = await call('resume', { continuation, ...script[step - 1](llm) });
  }
  assert.ok(resp.result, JSON.stringify(resp.error));
  return { result: resp.result, requests };
}

const says = (content, toolCalls) => () => ({ response: { content, tool_calls: toolCalls, usage: { input_tokens: 200, output_tokens: 30 } } });
const question = 'failed retry escalation';

test('llm: tier 3 answers from the prefetched entries and drops invented sources', { skip }, async (t) => {
  const { call } = await open(t);
  const plain = await call('query', { query: question });
  assert.equal(plain.result.needsLLM, true);
  const { result, requests } = await drive(call, 'query', { query: question, llm: true }, [
    says('## Summary\nThe billing lead is paged.\n## Sources\n- operations/oncall/escalation.md\n- ops/invented.md\n## Gaps\nnone'),
  ]);
  assert.equal(requests[0].max_tokens, 1024);
  assert.equal(requests[0].temperature, 0.3);
  assert.equal(result.tier, 3);
  assert.deepEqual(result.sources, ['operations/oncall/escalation.md']);
  assert.match(result.reason, /dropped sources the model was not shown: ops\/invented\.md/);
  assert.equal(result.llm.steps[0].inputTokens, 200);
});

test('llm: tier 4 runs tools, answers malformed calls with errors, and survives a model error', { skip }, async (t) => {
  const { call } = await open(t);
  const { result, requests } = await drive(call, 'query', { query: question, llm: true }, [
    says('NOT COVERED'),
    says('', [
      { id: 'a', name: 'read_entry', arguments: '{"path":"operations/oncall/escalation.md"}' },
      { id: 'b', name: 'read_entry', arguments: '{"path":' },
      { id: 'c', name: 'rm_rf', arguments: '{}' },
    ]),
    () => ({ error: { code: 'http', message: '500 after 3 retries' } }),
  ]);
  assert.equal(requests[1].tools.length, 4);
  const tools = requests[2].messages.slice(-3);
  assert.deepEqual(tools.map((m) => [m.role, m.tool_call_id]), [['tool', 'a'], ['tool', 'b'], ['tool', 'c']]);
  assert.match(tools[0].content, /pages the billing lead/);
  assert.match(tools[1].content, /^error: arguments are not valid/);
  assert.match(tools[2].content, /^error: unknown tool "rm_rf"/);
  assert.equal(result.tier, 4);
  assert.equal(result.incomplete, true);
  assert.deepEqual(result.sources, ['operations/oncall/escalation.md']);
  assert.match(result.reason, /the model call failed \(http: 500 after 3 retries\)/);
});

test('llm: cancelling a curateFrom leaves the folder unchanged; finishing one writes it', { skip }, async (t) => {
  const { dir, call } = await open(t);
  const snapshot = () => JSON.stringify(fs.readdirSync(dir, { recursive: true }).filter((p) => !p.startsWith('.arbor')).sort().map((p) => [p, fs.statSync(path.join(dir, p)).isFile() ? fs.readFileSync(path.join(dir, p), 'utf8') : '']));
  const before = snapshot();
  const files = [{ name: 'standup.txt', content: 'Refunds over 500 EUR need a second approval from finance.' }];
  const add = { type: 'ADD', path: 'finance/refunds', title: 'Refund approval', content: { narrative: 'Refunds over 500 EUR need a second approval from finance.' }, reason: 'standup' };
  const curate = (ops) => says('', [{ id: 'k', name: 'curate', arguments: JSON.stringify({ operations: ops }) }]);

  let resp = await call('curateFrom', { files });
  resp = await call('resume', { continuation: resp.result.continuation, ...curate([add])() });
  assert.match(resp.result.llm.messages.at(-1).content, /"added":1/);
  const cancelled = await call('cancel', { continuation: resp.result.continuation });
  assert.deepEqual(cancelled.result, { cancelled: true, steps: 2 });
  assert.equal(snapshot(), before);
  const again = await call('resume', { continuation: resp.result.continuation, response: { content: '' } });
  assert.equal(again.error.code, 'unknown_continuation');

  const { result } = await drive(call, 'curateFrom', { files }, [curate([add]), says('Stored the refund rule.')]);
  assert.equal(result.summary.added, 1);
  assert.match(fs.readFileSync(path.join(dir, 'finance/refunds/refund_approval.md'), 'utf8'), /second approval/);
});

test('llm: a continuation expires on the engine clock', { skip }, async (t) => {
  const { call } = await open(t, { continuationSeconds: 0.05 });
  const resp = await call('query', { query: question, llm: true });
  assert.equal(resp.result.status, 'pending');
  await new Promise((r) => setTimeout(r, 200));
  const late = await call('resume', { continuation: resp.result.continuation, response: { content: 'NOT COVERED' } });
  assert.equal(late.error.code, 'continuation_expired');
});
