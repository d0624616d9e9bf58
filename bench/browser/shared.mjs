// What sharing an IndexedDB database between tabs costs, in headless
// Chromium: every call of a memory on indexedDB(name) takes the database's
// Web Lock and reads its generation before running (so that no call runs
// on, or saves over, an older tree). Measured as ratios against a baseline
// in the same run: the same memory and database with the lock and the
// check left out (the storage without `exclusive`), i.e. the bindings as
// they were when one tab at a time was assumed. Also the cost of catching
// up: the first call in tab B after tab A saved (B reloads the tree and
// restarts its engine) against B's ordinary calls.
//
//   node bench/browser/shared.mjs [--notes N] [--calls N] [--out bench/browser/REPORT.md]

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../web-demo/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    notes: { type: 'string', default: '200' },
    calls: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '10' },
    out: { type: 'string', default: path.join(here, 'REPORT.md') },
  },
});
const notes = Number(args.notes);
const calls = Number(args.calls);
const rounds = Number(args.rounds);

const server = await serve({ port: 0 });
const browser = await chromium.launch({ executablePath: process.env.ARBOR_CHROMIUM ?? '/usr/bin/chromium' });
try {
  const context = await browser.newContext();
  // A page of the served origin that opens nothing itself.
  const blank = `${server.url}style.css`;
  const [a, b] = [await context.newPage(), await context.newPage()];
  await Promise.all([a.goto(blank), b.goto(blank)]);

  const seeded = await a.evaluate(async (notes) => {
    const { openMemory, indexedDB, deleteIndexedDB } = await import('/bindings/js/index.js');
    await deleteIndexedDB('bench-shared');
    const mem = await openMemory({ storage: indexedDB('bench-shared') });
    const ops = [];
    for (let i = 0; i < notes; i++) {
      ops.push({ type: 'ADD', path: `bench/topic${i % 10}`, title: `Note ${i}`, content: `Note ${i} is about invoices, retries and customer ${i % 37}.`, reason: 'bench' });
    }
    await mem.curate(ops);
    await mem.close();
    return notes;
  }, notes);

  // Steady state: one tab, lock + generation check vs. neither, and the two alone.
  const steady = await a.evaluate(
    async ({ calls }) => {
      const { openMemory, indexedDB } = await import('/bindings/js/index.js');
      // The baseline: the same adapter without `exclusive` and `watch`.
      const { exclusive, watch, ...plain } = Object.getOwnPropertyDescriptors(indexedDB('bench-shared'));
      const alone = await openMemory({ storage: Object.defineProperties({}, plain) });
      const shared = await openMemory({ storage: indexedDB('bench-shared') });
      // Interleaved blocks, so that warm-up and load on the machine fall on both alike.
      const spent = new Map([[shared, 0], [alone, 0]]);
      const blocks = 6;
      for (let k = -1; k < blocks; k++) {
        for (const mem of k % 2 ? [shared, alone] : [alone, shared]) {
          const t = performance.now();
          for (let i = 0; i < calls / blocks; i++) await mem.search(`invoices customer ${i % 37}`);
          if (k >= 0) spent.set(mem, spent.get(mem) + performance.now() - t); // block -1 warms up
        }
      }
      await Promise.all([shared.close(), alone.close()]);
      const [sharedMs, aloneMs] = [spent.get(shared) / calls, spent.get(alone) / calls];
      // What each call adds, alone: the lock and the generation read.
      const store = indexedDB('bench-shared');
      await store.load();
      let t = performance.now();
      for (let i = 0; i < calls; i++) await store.exclusive(() => {});
      const lockMs = (performance.now() - t) / calls;
      store.close();
      return { sharedMs, aloneMs, lockMs };
    },
    { calls },
  );

  // Catching up: A saves, then B's next call reloads and restarts first.
  await Promise.all(
    [a, b].map((p) =>
      p.evaluate(async () => {
        const { openMemory, indexedDB } = await import('/bindings/js/index.js');
        window.mem = await openMemory({ storage: indexedDB('bench-shared') });
      }),
    ),
  );
  const catchUp = [];
  const ordinary = [];
  for (let r = 0; r < rounds; r++) {
    await a.evaluate((r) => window.mem.curate({ type: 'ADD', path: 'bench/shared', title: `From A ${r}`, content: `Saved by tab A in round ${r}.`, reason: 'bench' }), r);
    const [first, next] = await b.evaluate(async (r) => {
      let t = performance.now();
      const hit = await window.mem.search(`saved by tab A round ${r}`);
      const first = performance.now() - t;
      if (!hit.results.some((h) => h.path === `bench/shared/from_a_${r}.md`)) throw new Error(`round ${r}: B did not find A's note`);
      t = performance.now();
      await window.mem.search(`saved by tab A round ${r}`);
      return [first, performance.now() - t];
    }, r);
    catchUp.push(first);
    ordinary.push(next);
  }
  await Promise.all([a, b].map((p) => p.evaluate(() => window.mem.close())));
  await a.evaluate(() => import('/bindings/js/index.js').then((m) => m.deleteIndexedDB('bench-shared')));

  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const f = (x) => x.toFixed(2);
  const report = `# Sharing an IndexedDB database between tabs

Generated by \`node bench/browser/shared.mjs\` in headless Chromium (${browser.version()}), ${seeded}
notes, on ${new Date().toISOString().slice(0, 10)}. Absolute times depend on the machine; the ratios are
the result.

| | ms per call | ratio |
| --- | ---: | ---: |
| \`search\`, one tab, without lock or generation check (baseline) | ${f(steady.aloneMs)} | 1.00 |
| \`search\`, one tab, Web Lock + generation check (what every call does now) | ${f(steady.sharedMs)} | ${f(steady.sharedMs / steady.aloneMs)} |
| the Web Lock + generation check alone (\`exclusive(() => {})\`) | ${f(steady.lockMs)} | ${f(steady.lockMs / steady.aloneMs)} |
| tab B's \`search\` after tab A saved (median of ${rounds}; reload + engine restart) | ${f(median(catchUp))} | ${f(median(catchUp) / median(ordinary))} × B's next call |
| tab B's next \`search\` (median) | ${f(median(ordinary))} | |

${calls} searches per steady row, in interleaved blocks. The third row is the price each call pays
for sharing; the whole call is the second row (on a busy machine it has come out at or below the
baseline: the lock's waits give the page's event loop turns it does not get between back-to-back
calls). A tab normally catches up while idle, on the BroadcastChannel message, before the user's
next call: the catch-up row is the worst case, a call racing the message. Its cost is an engine
restart, which reads the whole tree (the engine has no way yet to re-read only what changed).
`;
  fs.writeFileSync(args.out, report);
  process.stdout.write(report);
} finally {
  await browser.close();
  await server.close();
}
