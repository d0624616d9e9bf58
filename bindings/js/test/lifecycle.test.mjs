// The knowledge lifecycle and the fuzzy cache through the JS bindings:
// signals are batched in .arbor/state.json and written by flush().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openMemory, memory } from 'arbor-memory';
import { skipWithoutWasm, invoiceOp, defer } from './_engine.mjs';

const entryPath = 'engineering/billing/invoice_retry_policy.md';

const note = (title, text) => ({
  type: 'ADD', path: 'personal/travel', title, content: { narrative: text }, reason: 'background entries keep billing terms rare',
});

test('flush writes batched signals; a near-identical query is answered by the fuzzy cache', { skip: skipWithoutWasm }, async (t) => {
  const store = memory();
  const mem = await openMemory({ storage: store, fixedTime: '2026-01-01T00:00:00Z' });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp, note('Lisbon restaurants', 'Book the taberna for the first evening.'), note('Porto trains', 'Trains leave Lisbon every hour.')]);

  const first = await mem.query('how often are failed invoices retried');
  assert.equal(first.tierName, 'direct', first.reason);
  assert.equal(first.results[0].path, entryPath);
  assert.deepEqual(first.results[0].lifecycle, { ...first.results[0].lifecycle, importance: 50, maturity: 'draft', recency: 1 });
  assert.ok(first.results[0].lifecycle.score > 0);

  // {escalated, failed, invoices, often, retried} against {failed, invoices, often, retried}: Jaccard 0.8,
  // and the entry holds the word added ("usually" would not be served: the entry lacks it).
  const second = await mem.query('How often are failed invoices retried and escalated?');
  assert.equal(second.tier, 1);
  assert.equal(second.tierName, 'fuzzy-cache');
  assert.match(second.reason, /"how often are failed invoices retried".*Jaccard 0\.80/);
  assert.equal(second.answer, first.answer);
  assert.equal(second.results[0].lifecycle.importance, 53, 'the first answer was an access');

  // Accesses are batched: nothing written until flush.
  assert.equal(store.snapshot()['.arbor/state.json'], undefined);
  assert.deepEqual(await mem.flush(), { written: true, entries: 3 });
  const state = JSON.parse(store.snapshot()['.arbor/state.json']);
  assert.equal(state.version, 1);
  assert.equal(state.entries[entryPath].accesses, 2);
  assert.equal(state.entries[entryPath].importance, 56);
  assert.deepEqual(await mem.flush(), { written: false, entries: 3 });

  const stats = await mem.stats();
  assert.deepEqual(stats.maturity, { draft: 3, validated: 0, core: 0 });

  // Any curate drops the caches: the same question is searched again.
  await mem.curate(note('Sintra day trip', 'Take the early train.'));
  assert.equal((await mem.query('How often are failed invoices usually retried?')).tier, 2);
});

test('lifecycle options reach the engine and are validated', { skip: skipWithoutWasm }, async (t) => {
  await assert.rejects(openMemory({ lifecycle: { dailyDecay: 0 } }), (err) => err.code === 'invalid_params' && /dailyDecay/.test(err.message));
  const mem = await openMemory({ fixedTime: '2026-01-01T00:00:00Z', lifecycle: { relevanceWeight: 1, importanceWeight: 0, recencyWeight: 0, draftBoost: 1 } });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp, note('Lisbon restaurants', 'Book the taberna.')]);
  const { results } = await mem.query('invoice retry escalated');
  assert.equal(results[0].lifecycle.score, 1, 'relevance alone: the best hit scores 1 (its raw score relative to itself)');
});
