// Embeddings in a real browser: a page opens the embeddings fixture in a
// Web Worker (openMemoryInWorker) given the options of openaiEmbeddings;
// the worker makes its embedder, whose synchronous XMLHttpRequest asks the
// scripted server (tests/llm) for vectors across origins (CORS). The reads
// of the fixture must give the golden answers, as in Go and Node
// (tests/conformance/embed.test.mjs). Skips like browser.test.mjs when
// Chromium or the wasm is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { serve } from '../../web-demo/serve.mjs';
import { startScriptedServer } from '../llm/scripted-server.mjs';
import { loadExpected, loadFixture, normalize } from '../conformance/fixture.mjs';
import { readTree } from '../tree.mjs';
import { chromiumPath, playwright, repo, skip } from './chromium.mjs';

test('embeddings in Chromium: a worker makes its embedder from options and gives the golden answers', { skip, timeout: 120_000 }, async (t) => {
  const fixture = loadFixture('embed-fixture.json');
  const want = loadExpected('embed-expected.json');
  const reads = fixture.steps.slice(0, fixture.steps.findIndex((s) => s.method === 'curate'));
  const server = await serve({ port: 0 });
  const model = await startScriptedServer([]);
  const browser = await playwright.chromium.launch({ executablePath: chromiumPath });
  t.after(async () => {
    await browser.close();
    await server.close();
    await model.close();
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(server.url);

  const out = await page.evaluate(
    async ({ files, open, base, reads }) => {
      const { openMemoryInWorker } = await import('/bindings/js/worker.js');
      const mem = await openMemoryInWorker({ storage: { kind: 'memory', files }, ...open, embeddings: { baseURL: base, model: 'hashed-bow' } });
      const results = [];
      for (const step of reads) results.push(await mem.call(step.method, step.params));
      await mem.close();
      return { opened: mem.opened, results };
    },
    { files: readTree(path.join(repo, fixture.tree)), open: fixture.open, base: `${model.url}/v1`, reads },
  );

  assert.deepEqual(errors, []);
  assert.deepEqual(normalize(JSON.stringify({ id: 0, result: out.opened })), want.responses[0]);
  for (const [i, result] of out.results.entries()) {
    assert.deepEqual(normalize(JSON.stringify({ id: i + 1, result })), want.responses[i + 1], `step ${i + 1}: ${reads[i].method}`);
  }
  assert.ok(model.requests.some((r) => r.path.endsWith('/embeddings')), 'the worker asked the model for vectors');
});
