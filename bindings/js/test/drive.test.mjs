// The pending/resume loop (llm/drive.js) against a fake memory whose
// `call` plays the engine's part, so that the loop's own rules are
// checked apart from any engine: what resume gets, how adapter errors are
// passed on, and that aborting cancels the continuation.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MemoryMethods } from '../methods.js';
import { LLMError } from '../llm/index.js';

/** A memory whose engine answers with `results` in turn and records every call. */
class FakeMemory extends MemoryMethods {
  constructor(results, llm) {
    super(llm);
    this.results = results;
    this.calls = [];
  }

  async call(method, params = {}) {
    this.calls.push([method, params]);
    const next = this.results.shift();
    if (typeof next === 'function') return next(method, params);
    return next;
  }
}

const pending = (continuation, step, content = 'q') => ({
  status: 'pending', continuation, step,
  llm: { messages: [{ role: 'user', content }], max_tokens: 100, temperature: 0.3 },
});

/** An adapter answering from a list: values resolve, Errors reject. */
function adapter(answers) {
  const requests = [];
  return {
    requests,
    async complete(request, { signal } = {}) {
      requests.push({ request, signal });
      const a = answers.shift();
      if (typeof a === 'function') return a(signal);
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

const answer = (content) => ({ content, usage: { input_tokens: 10, output_tokens: 5 }, latency_ms: 1 });

test('without an adapter query is one plain call', async () => {
  const mem = new FakeMemory([{ tier: 2 }]);
  assert.deepEqual(await mem.query('q', { limit: 3 }), { tier: 2 });
  assert.deepEqual(mem.calls, [['query', { query: 'q', limit: 3 }]]);
});

test('pending → complete → resume until the final result', async () => {
  const llm = adapter([answer('one'), answer('two')]);
  const steps = [];
  const mem = new FakeMemory([pending('c1', 1), pending('c1', 2), { tier: 4, answer: 'done' }], llm);
  const res = await mem.query('how?', { tokenBudget: 5000, onStep: (s) => steps.push(s) });
  assert.deepEqual(res, { tier: 4, answer: 'done' });
  assert.deepEqual(mem.calls.map(([m]) => m), ['query', 'resume', 'resume']);
  assert.deepEqual(mem.calls[0][1], { query: 'how?', limit: undefined, llm: true, tokenBudget: 5000, maxIterations: undefined });
  assert.deepEqual(mem.calls[1][1], { continuation: 'c1', response: answer('one') });
  assert.deepEqual(mem.calls[2][1], { continuation: 'c1', response: answer('two') });
  assert.equal(llm.requests.length, 2);
  assert.deepEqual(steps.map((s) => [s.step, s.response.content]), [[1, 'one'], [2, 'two']]);
});

test('an adapter error goes to resume with its code; unknown errors as http', async () => {
  const llm = adapter([new LLMError('rate_limit', 'slow down'), new TypeError('boom')]);
  const mem = new FakeMemory([pending('c', 1), pending('c', 2), { tier: 3 }], llm);
  await mem.query('q');
  assert.deepEqual(mem.calls[1][1], { continuation: 'c', error: { code: 'rate_limit', message: 'slow down' } });
  assert.deepEqual(mem.calls[2][1], { continuation: 'c', error: { code: 'http', message: 'boom' } });
});

test('aborting during the model call cancels the continuation', async () => {
  const ctl = new AbortController();
  const llm = adapter([(signal) => new Promise((_, reject) => {
    signal.addEventListener('abort', () => reject(new LLMError('cancelled', 'cancelled')));
    ctl.abort(new Error('user gave up'));
  })]);
  const mem = new FakeMemory([pending('c9', 1), {}], llm);
  const err = await mem.query('q', { signal: ctl.signal }).catch((e) => e);
  assert.equal(err.name, 'ArborError');
  assert.equal(err.code, 'cancelled');
  assert.match(err.message, /user gave up/);
  assert.deepEqual(mem.calls.map(([m, p]) => [m, p.continuation]), [['query', undefined], ['cancel', 'c9']]);
});

test('an aborted signal sends nothing', async () => {
  const mem = new FakeMemory([], adapter([]));
  const err = await mem.query('q', { signal: AbortSignal.abort() }).catch((e) => e);
  assert.equal(err.code, 'cancelled');
  assert.equal(mem.calls.length, 0);
});

test('llm: false turns the default adapter off for one call', async () => {
  const mem = new FakeMemory([{ tier: 2 }], adapter([]));
  await mem.query('q', { llm: false });
  assert.deepEqual(mem.calls, [['query', { query: 'q', limit: undefined }]]);
});

test('curateFrom sends text as content, bytes as base64 data, and needs an adapter', async () => {
  const mem = new FakeMemory([pending('k', 1), { applied: [] }], adapter([answer('ok')]));
  await mem.curateFrom([{ name: 'a.txt', content: new TextEncoder().encode('héllo') }, { name: 'b.md', content: '# b' }], { instruction: 'focus' });
  assert.deepEqual(mem.calls[0], ['curateFrom', {
    files: [{ name: 'a.txt', data: Buffer.from('héllo').toString('base64') }, { name: 'b.md', content: '# b' }],
    instruction: 'focus', tokenBudget: undefined, maxIterations: undefined,
  }]);
  await assert.rejects(new FakeMemory([]).curateFrom([{ name: 'a', content: 'x' }]), /needs an LLM adapter/);
  await assert.rejects(mem.curateFrom([{ name: 'a', content: 42 }]), /file 0 must be/);
  await assert.rejects(mem.query('q', { llm: { notAnAdapter: true } }), /complete\(request/);
});

test('tidy drives the model only to apply: a plan, or llm: false, is one plain call', async () => {
  const llm = adapter([answer('---\ntitle: t\n---\n')]);
  const mem = new FakeMemory([{ suggestions: [] }, pending('t1', 1), { suggestions: [], llm: { steps: [] } }, { suggestions: [] }], llm);
  await mem.tidy({ kinds: ['merge'] });
  await mem.tidy({ kinds: ['merge'], apply: true, tokenBudget: 9000, limit: 3 });
  await mem.tidy({ apply: true, llm: false });
  const base = { folder: undefined, similarity: undefined, splitBytes: undefined, staleDays: undefined, archiveImportance: undefined, crowded: undefined, limit: undefined };
  assert.deepEqual(mem.calls.map(([m, p]) => [m, p]), [
    ['tidy', { ...base, kinds: ['merge'], apply: undefined }],
    ['tidy', { ...base, kinds: ['merge'], apply: true, limit: 3, llm: true, tokenBudget: 9000, maxIterations: undefined }],
    ['resume', { continuation: 't1', response: mem.calls[2][1].response }],
    ['tidy', { ...base, kinds: undefined, apply: true }],
  ]);
  assert.equal(llm.requests.length, 1);
});

test('a continuation lost to an engine restart starts the call over, a bounded number of times', async () => {
  const lost = () => { throw Object.assign(new Error('resume: unknown continuation'), { code: 'unknown_continuation' }); };
  const llm = adapter([answer('one'), answer('two')]);
  const mem = new FakeMemory([pending('c1', 1), lost, pending('c2', 1), { tier: 3, answer: 'fresh' }], llm);
  assert.deepEqual(await mem.query('how?'), { tier: 3, answer: 'fresh' });
  assert.deepEqual(mem.calls.map(([m]) => m), ['query', 'resume', 'query', 'resume']);

  const always = new FakeMemory([pending('a', 1), lost, pending('b', 1), lost, pending('c', 1), lost], adapter([answer('x'), answer('y'), answer('z')]));
  await assert.rejects(always.query('how?'), { code: 'unknown_continuation' });
  assert.equal(always.calls.filter(([m]) => m === 'query').length, 3);

  const expired = () => { throw Object.assign(new Error('resume: expired'), { code: 'continuation_expired' }); };
  const once = new FakeMemory([pending('a', 1), expired], adapter([answer('x')]));
  await assert.rejects(once.query('how?'), { code: 'continuation_expired' });
  assert.equal(once.calls.length, 2);
});
