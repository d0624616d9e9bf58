// One session long enough for guest memory to grow many times: every view
// of memory must be made afresh (abi.js, index.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openMemory, memory } from 'arbor-memory';
import { skipWithoutWasm } from './_engine.mjs';

const words = ['ledger', 'invoice', 'refund', 'payout', 'webhook', 'retry', 'tenant', 'quota', 'archive', 'cursor'];

test('300 sizeable entries in one session, then search', { skip: skipWithoutWasm, timeout: 300_000 }, async () => {
  const store = memory();
  const mem = await openMemory({ storage: store, fixedTime: '2026-01-01T00:00:00Z' });
  try {
    for (let batch = 0; batch < 6; batch++) {
      const ops = [];
      for (let i = batch * 50; i < (batch + 1) * 50; i++) {
        const w = words[i % words.length];
        ops.push({
          type: 'ADD',
          path: `domain${i % 5}/topic${i % 7}`,
          title: `Note ${i} about ${w}`,
          content: {
            narrative: `Entry ${i} (marker${i}). ` + `The ${w} subsystem handles case ${i} carefully. `.repeat(60),
            facts: [{ subject: w, statement: `${w} number ${i} is tracked`, category: 'project' }],
            snippets: [`const x${i} = "${'y'.repeat(500)}";`],
            tags: [w],
            keywords: [w, `k${i}`],
          },
          reason: `bulk ${i}`,
        });
      }
      const res = await mem.curate(ops);
      assert.equal(res.summary.added, 50, JSON.stringify(res.applied.find((a) => a.status !== 'success')));
    }
    const stats = await mem.stats();
    assert.equal(stats.entries, 300);
    const hit = await mem.search('marker217', { limit: 3 });
    assert.equal(hit.results[0]?.path, 'domain2/topic0/note_217_about_quota.md');
    const many = await mem.search('webhook', { limit: 100 });
    assert.equal(many.results.length, 30);
    const text = await mem.read('domain2/topic0/note_217_about_quota.md');
    assert.match(text.markdown, /marker217/);
  } finally {
    await mem.close();
  }
});
