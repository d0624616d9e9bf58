// End to end in Node: the package (the wasm engine) with the real
// fetch-based adapters, talking to the scripted server. The scripts in
// scripts/ and the tree in tree/ are shared with the Go end-to-end tests
// (host/cmd/arbor/llm_test.go), which check the same outcomes through the
// arbor command.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openMemory, memory, openaiCompatible, anthropic } from '../../bindings/js/index.js';
import { startScriptedServer } from './scripted-server.mjs';
import { llmTree, notes, script, QUESTION } from './fixture.mjs';

/** Opens the fixture tree with an adapter on a scripted server playing `name`. */
async function setup(t, name, { provider = 'openai-compatible', adapter = {}, steps, llmOptions, tree = llmTree() } = {}) {
  const srv = await startScriptedServer(steps ?? script(name));
  t.after(() => srv.close());
  const retries = [];
  const options = { model: 'scripted-large', apiKey: 'sk-e2e', onRetry: (r) => retries.push(r), ...adapter };
  const llm = provider === 'anthropic'
    ? anthropic({ ...options, baseURL: srv.url, browser: false })
    : openaiCompatible({ ...options, provider, baseURL: `${srv.url}/v1` });
  const mem = await openMemory({ storage: memory(tree), llm, llmOptions, fixedTime: '2026-03-01T00:00:00Z' });
  t.after(() => mem.close());
  return { srv, mem, retries };
}

for (const provider of ['openai-compatible', 'anthropic']) {
  test(`tier 3: a grounded answer with its sources (${provider})`, async (t) => {
    const { srv, mem } = await setup(t, 'tier3.json', { provider });
    const steps = [];
    const res = await mem.query(QUESTION, { onStep: (s) => steps.push(s) });
    assert.equal(res.tier, 3);
    assert.equal(res.tierName, 'llm');
    assert.deepEqual(res.sources, ['engineering/payments/card_retries.md', 'engineering/billing/invoice_retry_policy.md']);
    assert.match(res.answer, /^Summary: Failed card payments/);
    assert.equal(res.llm.steps.length, 1);
    assert.deepEqual([res.llm.inputTokens, res.llm.outputTokens], [850, 64]);
    assert.equal(res.llm.steps[0].model, 'scripted-large');
    assert.ok(res.llm.steps[0].latencyMs > 0);
    assert.equal(steps.length, 1);
    // Asked again, the answer is the exact cache's: no model call.
    const again = await mem.query(QUESTION);
    assert.equal(again.tier, 0);
    assert.equal(again.answer, res.answer);

    assert.equal(srv.requests.length, 1);
    const { body } = srv.requests[0];
    assert.equal(body.max_tokens, 1024);
    assert.equal(body.temperature, 0.3);
    assert.equal(body.tools, undefined, 'tier 3 offers no tools');
    const user = provider === 'anthropic' ? body.messages[0].content[0].text : body.messages[1].content;
    assert.match(user, /=== entry: engineering\/payments\/card_retries\.md ===/);
    assert.match(user, new RegExp(QUESTION));
  });
}

test('tier 4: a multi-step tool loop, a malformed call answered with an error', async (t) => {
  const { srv, mem } = await setup(t, 'tier4.json');
  const res = await mem.query(QUESTION);
  assert.equal(res.tier, 4);
  assert.equal(res.tierName, 'agentic');
  assert.deepEqual(res.sources, ['operations/oncall/escalation.md']);
  assert.match(res.answer, /pages the billing lead/);
  assert.deepEqual(res.llm.steps.map((s) => s.purpose), ['tier3', 'tier4', 'tier4', 'tier4', 'tier4']);
  assert.deepEqual(res.llm.steps.map((s) => (s.toolCalls ?? []).join('+')), ['', 'search_knowledge', 'read_entry+follow_relations', 'search_knowledge', '']);
  assert.equal(res.llm.inputTokens, 700 + 900 + 1100 + 1300 + 1400);

  assert.equal(srv.requests.length, 5);
  const second = srv.requests[1].body;
  assert.equal(second.max_tokens, 2048);
  assert.equal(second.temperature, 0.5);
  assert.deepEqual(second.tools.map((x) => x.function.name).sort(), ['follow_relations', 'list_tree', 'read_entry', 'search_knowledge']);
  // Each turn sees the results of the previous one's calls.
  const last = (i) => srv.requests[i].body.messages.at(-1);
  assert.equal(last(2).tool_call_id, 'a');
  assert.match(last(2).content, /operations\/oncall\/escalation\.md/);
  assert.equal(last(3).tool_call_id, 'c');
  assert.match(srv.requests[3].body.messages.at(-2).content, /pages the billing lead/);
  assert.equal(last(4).tool_call_id, 'd');
  assert.match(last(4).content, /^error: arguments are not valid/);
});

test('garbage from the model: an unusable tier-3 answer leaves the tier-2 results', async (t) => {
  const { mem } = await setup(t, 'tier3-garbage.json');
  const res = await mem.query(QUESTION);
  assert.equal(res.tier, 2);
  assert.equal(res.needsLLM, true);
  assert.match(res.reason, /tier 3: the model's answer was not used: .*does not follow the format/);
  assert.doesNotMatch(res.answer, /lorem ipsum/);
  assert.equal(res.sources, undefined);
});

test('garbage from the server: an invalid body reaches the engine as an invalid error', async (t) => {
  const { srv, mem } = await setup(t, 'body-garbage.json');
  const res = await mem.query(QUESTION);
  assert.equal(res.tier, 2);
  assert.match(res.reason, /tier 3: the model call failed \(invalid: openai-compatible: the answer could not be decoded/);
  assert.match(res.llm.steps[0].error, /^invalid: /);
  assert.equal(srv.requests.length, 1, 'an invalid answer is not retried');
});

test('HTTP 500 then success: the adapter retries, the engine sees one step', async (t) => {
  const { srv, mem, retries } = await setup(t, 'http500.json');
  const res = await mem.query(QUESTION);
  assert.equal(res.tier, 3);
  assert.equal(srv.requests.length, 2);
  assert.deepEqual(retries.map((r) => r.status), [500]);
  assert.equal(res.llm.steps.length, 1);
});

test('429 with Retry-After: the adapter waits as asked, then answers', async (t) => {
  const { srv, mem, retries } = await setup(t, 'ratelimit.json');
  const res = await mem.query(QUESTION);
  assert.equal(res.tier, 3);
  assert.equal(srv.requests.length, 2);
  assert.deepEqual(retries.map((r) => [r.status, r.waitMs, r.retryAfter]), [[429, 50, true]]);
  assert.ok(res.llm.steps[0].latencyMs >= 50, 'the step latency includes the wait');
});

test('429 until the retries run out: rate_limit reaches the engine', async (t) => {
  const { srv, mem } = await setup(t, null, { steps: [{ status: 429 }, { status: 429 }], adapter: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 2 } } });
  const res = await mem.query(QUESTION);
  assert.equal(res.tier, 2);
  assert.match(res.reason, /tier 3: the model call failed \(rate_limit: /);
  assert.equal(srv.requests.length, 2);
});

test('budget exhaustion ends the loop with the entries read', async (t) => {
  const { srv, mem } = await setup(t, 'budget.json');
  const res = await mem.query(QUESTION, { tokenBudget: 5000 });
  assert.equal(res.tier, 4);
  assert.equal(res.incomplete, true);
  assert.match(res.reason, /the token budget is spent \(6310 of 5000 tokens used\)/);
  assert.deepEqual(res.sources, ['engineering/billing/dunning_emails.md']);
  assert.equal(srv.requests.length, 4);
  assert.equal(srv.requests[3].body.max_tokens, 290, 'the last call asks only for what the budget has left');
});

test('the budget can be the memory\'s default (llmOptions)', async (t) => {
  const { srv, mem } = await setup(t, 'budget.json', { llmOptions: { tokenBudget: 5000 } });
  const res = await mem.query(QUESTION);
  assert.match(res.reason, /the token budget is spent \(6310 of 5000 tokens used\)/);
  assert.equal(srv.requests.length, 4);
  await assert.rejects(openMemory({ llmOptions: { maxIterations: 51 } }), (e) => e.code === 'invalid_params');
});

test('curateFrom: a failed operation, the model sees it and retries', async (t) => {
  const { srv, mem } = await setup(t, 'curate.json');
  const res = await mem.curateFrom([{ name: 'notes.txt', content: new TextEncoder().encode(notes()) }]);
  assert.deepEqual(res.attempts.map((a) => [a.turn, a.type, a.status]), [[1, 'ADD', 'success'], [1, 'UPDATE', 'failed'], [2, 'ADD', 'success']]);
  assert.deepEqual(res.applied.map((a) => [a.type, a.path, a.status]), [
    ['ADD', 'engineering/releases/deploy_freeze.md', 'success'],
    ['ADD', 'engineering/releases/hotfix_approval.md', 'success'],
  ]);
  assert.deepEqual(res.summary, { added: 2, updated: 0, merged: 0, deleted: 0, moved: 0, failed: 0 });
  assert.match(res.message, /Stored the deploy freeze/);
  assert.equal(res.llm.steps.length, 3);
  // The second turn saw the failure.
  const feedback = srv.requests[1].body.messages.at(-1);
  assert.equal(feedback.role, 'tool');
  assert.match(feedback.content, /"status":"failed"/);
  assert.match(srv.requests[0].body.messages[1].content, /Deploys freeze on Fridays after 15:00/);
  // Written for real, and searchable.
  const entry = await mem.read('engineering/releases/hotfix_approval.md');
  assert.match(entry.markdown, /release manager approves every hotfix/);
  assert.equal((await mem.search('hotfix approval', { limit: 1 })).results[0].path, 'engineering/releases/hotfix_approval.md');
});

test('cancellation: aborting mid-curation leaves the tree unchanged', async (t) => {
  const { srv, mem } = await setup(t, 'cancel.json');
  const before = (await mem.exportFiles()).map((f) => f.path).sort();
  const ctl = new AbortController();
  const running = mem.curateFrom([{ name: 'notes.txt', content: notes() }], { signal: ctl.signal });
  while (srv.requests.length < 2) await new Promise((r) => setTimeout(r, 5));
  ctl.abort(new Error('the user pressed stop'));
  const err = await running.catch((e) => e);
  assert.equal(err.code, 'cancelled');
  assert.match(err.message, /the user pressed stop/);
  assert.deepEqual((await mem.exportFiles()).map((f) => f.path).sort(), before, 'the staged ADD never reached the tree');
  await assert.rejects(mem.read('engineering/releases/deploy_freeze.md'), (e) => e.code === 'not_found');
  // The memory still answers, with or without the model.
  assert.equal((await mem.query(QUESTION, { llm: false })).tier, 2);
});

/** The fixture tree with a copy of the invoice policy saved later with one fact more (as host/cmd/arbor/tidyllm_test.go plants it). */
function tidyTree() {
  const tree = llmTree();
  const keep = 'engineering/billing/invoice_retry_policy.md';
  tree['engineering/billing/invoice_retry_policy_copy.md'] =
    tree[keep].replace('updatedAt: 2026-01-12T09:00:00Z', 'updatedAt: 2026-02-12T09:00:00Z') + '\n## Facts\n- retries: three\n';
  return tree;
}

test('tidy: the model writes the merge; a plan asks no model; garbage falls back with a warning', async (t) => {
  const { srv, mem } = await setup(t, 'tidy.json', { tree: tidyTree() });
  const plan = await mem.tidy({ kinds: ['merge'] });
  assert.equal(plan.suggestions.length, 1);
  assert.equal(srv.requests.length, 0, 'a plan needs no model');
  const steps = [];
  const res = await mem.tidy({ kinds: ['merge'], apply: true, onStep: (s) => steps.push(s) });
  assert.equal(res.applied.summary.merged, 1);
  const [s] = res.suggestions;
  assert.equal(s.mergedBy, 'model');
  assert.equal(s.warning, undefined);
  assert.deepEqual(res.llm.steps.map((x) => x.purpose), ['tidy']);
  assert.equal(steps.length, 1);
  assert.equal(srv.requests.length, 1);
  assert.equal(srv.requests[0].body.temperature, 0.2);
  assert.match(srv.requests[0].body.messages[1].content, /=== entry: engineering\/billing\/invoice_retry_policy_copy\.md ===/);
  const merged = await mem.read(s.paths[0]);
  assert.match(merged.markdown, /Both copies say so\./);
  await assert.rejects(mem.read(s.paths[1]), (e) => e.code === 'not_found');

  const bad = await setup(t, '', { tree: tidyTree(), steps: [{ reply: { content: '---\ntitle: [unclosed\n---\n' } }] });
  const fell = await bad.mem.tidy({ kinds: ['merge'], apply: true });
  assert.equal(fell.applied.summary.merged, 1);
  assert.equal(fell.suggestions[0].mergedBy, 'tidy');
  assert.match(fell.suggestions[0].warning, /^the model's merge cannot be used: not an entry: .*; merged deterministically$/);
  const kept = await bad.mem.read(fell.suggestions[0].paths[0]);
  assert.match(kept.markdown, /retries: three/);
  assert.doesNotMatch(kept.markdown, /unclosed/);
  // llm: false merges deterministically without asking.
  const plain = await setup(t, '', { tree: tidyTree(), steps: [] });
  const det = await plain.mem.tidy({ kinds: ['merge'], apply: true, llm: false });
  assert.equal(det.suggestions[0].mergedBy, undefined);
  assert.equal(plain.srv.requests.length, 0);
});

test('tidy: aborting while the model writes the merge leaves the tree unchanged', async (t) => {
  const steps = script('tidy.json').map((s) => ({ ...s, delay_ms: 60000 }));
  const { srv, mem } = await setup(t, '', { tree: tidyTree(), steps });
  const before = await mem.exportFiles();
  const ctl = new AbortController();
  const running = mem.tidy({ kinds: ['merge'], apply: true, signal: ctl.signal });
  while (srv.requests.length < 1) await new Promise((r) => setTimeout(r, 5));
  ctl.abort(new Error('the user pressed stop'));
  const err = await running.catch((e) => e);
  assert.equal(err.code, 'cancelled');
  const after = await mem.exportFiles();
  const text = (files) => files.filter((f) => !f.path.startsWith('.arbor/')).map((f) => [f.path, new TextDecoder().decode(f.data)]).sort();
  assert.deepEqual(text(after), text(before));
  assert.equal((await mem.tidy({ kinds: ['merge'] })).suggestions.length, 1, 'the duplicates are still there');
});
