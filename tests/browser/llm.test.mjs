// The LLM tiers in a real browser: a page opens the fixture tree in a Web
// Worker (openMemoryInWorker) and in the page itself, with the fetch-based
// adapter talking to the scripted server (tests/llm) from the page. The
// worker relays pending results; the model calls, and the key, stay in the
// page. Skips like browser.test.mjs when Chromium or the wasm is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serve } from '../../web-demo/serve.mjs';
import { startScriptedServer } from '../llm/scripted-server.mjs';
import { llmTree, script, QUESTION } from '../llm/fixture.mjs';
import { chromiumPath, playwright, skip } from './chromium.mjs';

test('LLM tiers in Chromium: worker and page, adapter in the page', { skip, timeout: 120_000 }, async (t) => {
  const server = await serve({ port: 0 });
  const model = await startScriptedServer([...script('tier3.json'), ...script('cancel.json')]);
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

  const out = await page.evaluate(async ({ files, base, question }) => {
    const { openMemoryInWorker } = await import('/bindings/js/worker.js');
    const { openMemory, memory, openaiCompatible } = await import('/bindings/js/index.js');
    const llm = openaiCompatible({ baseURL: base, model: 'scripted-large', apiKey: 'sk-page' });
    const worker = await openMemoryInWorker({ storage: { kind: 'memory', files }, fixedTime: '2026-03-01T00:00:00Z', llm, llmOptions: { maxIterations: 40 } });
    const q = await worker.query(question);
    await worker.close();
    // llmOptions reach the engine in the worker: a bad one is refused there.
    const refused = await openMemoryInWorker({ llmOptions: { maxIterations: 51 } }).then(() => 'opened', (e) => e.code);

    // In the page's own thread: cancelling a curation.
    const mem = await openMemory({ storage: memory(files), fixedTime: '2026-03-01T00:00:00Z', llm });
    const ctl = new AbortController();
    let calls = 0;
    // Gives up while the second model call is in flight.
    const impatient = {
      complete(req, opts) {
        const p = llm.complete(req, opts);
        if (++calls === 2) ctl.abort();
        return p;
      },
    };
    const running = mem.curateFrom([{ name: 'notes.txt', content: 'Deploys freeze on Fridays after 15:00 until Monday morning.' }], {
      llm: impatient,
      signal: ctl.signal,
    });
    const err = await running.catch((e) => e);
    const entries = (await mem.stats()).entries;
    await mem.close();
    return { tier: q.tier, sources: q.sources, steps: q.llm.steps.length, cancel: err.code, entries, refused };
  }, { files: llmTree(), base: `${model.url}/v1`, question: QUESTION });

  assert.deepEqual(errors, []);
  assert.equal(out.tier, 3);
  assert.deepEqual(out.sources, ['engineering/payments/card_retries.md', 'engineering/billing/invoice_retry_policy.md']);
  assert.equal(out.steps, 1);
  assert.equal(out.refused, 'invalid_params');
  assert.equal(out.cancel, 'cancelled');
  assert.equal(out.entries, 4, 'the cancelled curation wrote nothing');
  assert.equal(model.requests[0].headers.authorization, 'Bearer sk-page');
  assert.ok(model.requests.length >= 2, `${model.requests.length} requests`);
});
