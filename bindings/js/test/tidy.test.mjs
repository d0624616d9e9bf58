// tidy(): the upkeep plan, and its application, through the package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openMemory, memory, ArborError } from 'arbor-memory';
import { skipWithoutWasm, defer } from './_engine.mjs';

const fixedTime = '2026-01-01T00:00:00Z';
const narrative = 'Failed invoices are retried three times, two days apart, then the account goes to the collections team.';

test('tidy() plans without writing, applies with apply, refuses an unknown kind', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ storage: memory(), fixedTime });
  defer(t, () => mem.close());
  const add = (path) => ({ type: 'ADD', path, title: 'Invoice retries', content: narrative, reason: 'r' });
  await mem.curate([add('engineering/billing'), add('finance/billing')]);
  const plan = await mem.tidy({ kinds: ['merge'] });
  assert.equal(plan.suggestions.length, 1);
  assert.equal(plan.counts.merge, 1);
  assert.equal(plan.applied, undefined);
  assert.equal(plan.suggestions[0].operations[0].type, 'MERGE');
  assert.equal((await mem.search('invoices retried')).total, 2);
  const done = await mem.tidy({ kinds: ['merge'], apply: true });
  assert.equal(done.applied?.summary.merged, 1);
  const left = await mem.search('invoices retried');
  assert.deepEqual(left.results.map((r) => r.path), [plan.suggestions[0].paths[0]]);

  // Nothing is stale: the entries were written at the fixed time.
  assert.equal((await mem.tidy({ kinds: ['archive'] })).suggestions.length, 0);
  await assert.rejects(mem.tidy({ kinds: ['dedupe'] }), (err) => err instanceof ArborError && err.code === 'invalid_params');
  const status = await mem.status();
  assert.equal(status.upkeep, 0);
});

test('tidy() returns the first limit suggestions and says how many it left out; apply with a limit applies only those', { skip: skipWithoutWasm }, async (t) => {
  const n = 5;
  /** @type {Record<string, string>} */
  const files = {};
  for (let i = 0; i < n; i++) {
    files[`notes/old/note_${i}.md`] = `---\ntitle: Old note ${i}\ncreatedAt: 2024-01-01T00:00:00Z\n---\n\n## Narrative\nOld note number ${i}.\n`;
  }
  const mem = await openMemory({ storage: memory(files), fixedTime });
  defer(t, () => mem.close());
  const plan = await mem.tidy({ kinds: ['archive'], limit: 2 });
  assert.equal(plan.suggestions.length, 2);
  assert.equal(plan.omitted, n - 2);
  assert.equal(plan.counts.archive, n);
  const all = await mem.tidy({ kinds: ['archive'], limit: 0 });
  assert.equal(all.suggestions.length, n);
  assert.equal(all.omitted, undefined);
  assert.deepEqual(plan.suggestions, all.suggestions.slice(0, 2));
  const done = await mem.tidy({ kinds: ['archive'], limit: 2, apply: true });
  assert.equal(done.applied?.summary.moved, 2);
  assert.equal((await mem.tidy({ kinds: ['archive'] })).suggestions.length, n - 2);
  await assert.rejects(mem.tidy({ limit: -1 }), (err) => err instanceof ArborError && err.code === 'invalid_params');
});
