// The web demo with a model, in headless Chromium: the model is configured
// through the page's settings panel and answered by the scripted server of
// tests/llm (scripts/demo.json), which records every request, so the test
// can tell that typing made none. Skips like browser.test.mjs when
// Chromium or the wasm is missing. ARBOR_SCREENSHOT_LLM=path saves a
// screenshot of the page showing a tier-3 answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve } from '../../web-demo/serve.mjs';
import { startScriptedServer } from '../llm/scripted-server.mjs';
import { script } from '../llm/fixture.mjs';
import { chromiumPath, playwright, repo, skip } from './chromium.mjs';

const STORE = 'arbor-notes-model';

test('the web demo asks a configured model on Enter, never while typing', { skip, timeout: 180_000 }, async (t) => {
  const server = await serve({ port: 0 });
  const model = await startScriptedServer(script('demo.json'));
  const browser = await playwright.chromium.launch({ executablePath: chromiumPath });
  t.after(async () => {
    await browser.close();
    await server.close();
    await model.close();
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // Chromium logs every failed response itself; the 401 is the test's own.
  page.on('console', (msg) => msg.type() === 'error' && !/status of 401 \(Unauthorized\)/.test(msg.text()) && errors.push(msg.text()));
  const loaded = new Set();
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.origin === server.url.replace(/\/$/, '')) loaded.add(url.pathname);
  });

  const ready = () => page.waitForSelector('body[data-ready=true]', { timeout: 30_000 });
  const note = () => page.textContent('#llm-note');
  const progress = () => page.textContent('#ask-progress');
  const stored = () => page.evaluate((k) => localStorage.getItem(k), STORE);
  const writeNote = async (topic, title, text) => {
    await page.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await page.fill('#note-domain', 'engineering');
    await page.fill('#note-topic', topic);
    await page.fill('#note-title', title);
    await page.fill('#note-text', text);
    await page.fill('#note-reason', 'from the billing runbook');
    await page.click('#note-form button[type=submit]');
    await page.waitForSelector('#message:not([hidden])');
    assert.equal(await page.$eval('#message', (el) => el.classList.contains('error')), false, await page.textContent('#message'));
  };
  /** Types `q` key by key, as a person would, and waits for its search. */
  const type = async (q) => {
    await page.fill('#search', '');
    await page.evaluate(() => {
      const meta = document.getElementById('search-meta');
      meta.textContent = '';
      delete meta.dataset.query;
    });
    await page.type('#search', q);
    // The line of the last keystroke's search, not of an earlier prefix's
    // that finished while the typing went on.
    await page.waitForFunction((q) => document.getElementById('search-meta').dataset.query === q && document.getElementById('search').value === q, q);
  };
  const configure = async ({ key, remember }) => {
    if (!(await page.$eval('#model-settings', (d) => d.open))) await page.click('#model-settings summary');
    await page.selectOption('#model-provider', 'openai-compatible');
    await page.fill('#model-base-url', `${model.url}/v1`);
    await page.fill('#model-name', 'scripted-large');
    await page.fill('#model-key', key);
    await page.setChecked('#model-remember', remember);
    await page.click('#model-form button[type=submit]');
  };

  await page.goto(server.url);
  await ready();
  assert.match(await note(), /No LLM is configured/);
  assert.equal(await page.isVisible('#ask-button'), false, 'no Ask button without a model');
  await writeNote('billing', 'Invoice retry policy', 'Failed invoices are retried three times at 24 hour intervals, then escalated to the billing lead.');
  await writeNote('payments', 'Card retries', "Failed card payments are retried after one hour, then after one day; the card processor's decline code decides whether a retry is allowed.");

  await t.test('the settings panel: labelled fields; a bad setting is refused in place', async () => {
    for (const id of ['model-provider', 'model-base-url', 'model-name', 'model-key', 'model-remember']) {
      assert.ok(await page.$(`label[for=${id}], label:has(#${id})`), `${id} has a label`);
    }
    await page.click('#model-settings summary');
    await page.fill('#model-base-url', 'ftp://example.com');
    await page.fill('#model-name', 'scripted-large');
    await page.click('#model-form button[type=submit]');
    await page.waitForSelector('#model-problem:not([hidden])');
    assert.match(await page.textContent('#model-problem'), /not an http\(s\) URL/);
    assert.match(await note(), /No LLM is configured/);
  });

  await t.test('configured for the tab: typing makes no model request, Enter gets a tier-3 answer with sources', async () => {
    await configure({ key: 'sk-demo', remember: false });
    assert.match(await note(), /^Model: scripted-large \(OpenAI-compatible, http:\/\/127\.0\.0\.1:\d+\/v1\), kept for this tab only/);
    assert.equal(await stored(), null, 'nothing stored without "remember"');
    assert.equal(await page.isHidden('#model-problem'), true);

    await type('failed retry escalation');
    assert.match(await page.textContent('#search-meta'), /tier 2 .*no direct answer without an LLM/);
    assert.equal(model.requests.length, 0, 'search as you type called the model');

    await page.press('#search', 'Enter');
    await page.waitForFunction(() => /^Answered by/.test(document.getElementById('ask-progress').textContent));
    assert.match(await progress(), /^Answered by tier 3 \(.+\) · 1 model call, 861 tokens \(790 in, 71 out\)/);
    assert.equal(model.requests.length, 1);
    assert.equal(model.requests[0].headers.authorization, 'Bearer sk-demo');
    assert.equal(model.requests[0].body.model, 'scripted-large');
    assert.deepEqual(await page.$$eval('#ask-answer h4', (hs) => hs.map((h) => h.textContent)), ['Summary', 'Details', 'Sources', 'Gaps']);
    assert.match(await page.textContent('#ask-answer'), /escalated to the billing lead/);
    const sources = ['engineering/billing/invoice_retry_policy.md', 'engineering/payments/card_retries.md'];
    assert.deepEqual(await page.$$eval('#ask-sources a', (as) => as.map((a) => a.getAttribute('href'))), sources.map((p) => `#/entry/${p}`));
    assert.equal(await page.isHidden('#ask-cancel'), true);
    assert.equal(await page.isHidden('#ask-error'), true);

    if (process.env.ARBOR_SCREENSHOT_LLM) {
      await page.evaluate(() => {
        document.getElementById('message').setAttribute('hidden', '');
        window.scrollTo(0, 0);
      });
      await page.screenshot({ path: process.env.ARBOR_SCREENSHOT_LLM, fullPage: false });
    }
    await page.click('#ask-sources a >> nth=1');
    await page.waitForFunction(() => document.getElementById('entry-heading').textContent === 'Card retries');
  });

  await t.test('Cancel abandons the model call in flight', async () => {
    await type('how are failed payments retried and escalated');
    assert.equal(model.requests.length, 1);
    await page.click('#ask-button');
    await page.waitForFunction(() => /^Model step 1: waiting for scripted-large/.test(document.getElementById('ask-progress').textContent));
    await page.click('#ask-cancel');
    await page.waitForFunction(() => /^Cancelled/.test(document.getElementById('ask-progress').textContent));
    assert.equal(await progress(), 'Cancelled after 1 model call; nothing was kept.');
    assert.equal(model.requests.length, 2);
  });

  await t.test('remembered across a reload; a refused key is an auth message, not an exception', async () => {
    await configure({ key: 'sk-wrong', remember: true });
    assert.match(await note(), /remembered on this device/);
    assert.equal(JSON.parse(await stored()).apiKey, 'sk-wrong');
    await page.reload();
    await ready();
    assert.match(await note(), /^Model: scripted-large .*remembered on this device/);
    assert.equal(await page.inputValue('#model-key'), 'sk-wrong');
    assert.equal(await page.isChecked('#model-remember'), true);

    await type('retry');
    await page.press('#search', 'Enter');
    await page.waitForSelector('#ask-error:not([hidden])');
    const shown = await page.textContent('#ask-error');
    assert.match(shown, /The provider refused the API key/);
    assert.match(shown, /\(auth: openai-compatible: .*401.*invalid api key/);
    assert.doesNotMatch(shown, /sk-wrong/);
    await page.waitForFunction(() => /^Answered by/.test(document.getElementById('ask-progress').textContent));
    // The engine falls back to what the no-LLM tiers had (here the query
    // cache of the search typed just before).
    assert.match(await progress(), /^Answered by tier [0-2] \(.+\) · 1 model call, 0 tokens/);
    assert.equal(model.requests.length, 3, 'a refused key is not retried');
    assert.equal(model.requests[2].headers.authorization, 'Bearer sk-wrong');
  });

  await t.test('Forget drops the model and what was stored; Enter then asks nothing', async () => {
    if (!(await page.$eval('#model-settings', (d) => d.open))) await page.click('#model-settings summary');
    await page.click('#model-forget');
    assert.match(await note(), /No LLM is configured/);
    assert.equal(await stored(), null);
    assert.equal(await page.inputValue('#model-key'), '');
    assert.equal(await page.isVisible('#ask-button'), false);
    await type('card decline');
    await page.press('#search', 'Enter');
    await page.waitForTimeout(200);
    assert.equal(model.requests.length, 3);
  });

  await t.test('the offline cache lists every file the page loaded', () => {
    const sw = fs.readFileSync(path.join(repo, 'web-demo/sw.js'), 'utf8');
    const listed = new Set([...sw.matchAll(/^\s+'([^']+)',$/gm)].map((m) => `/${m[1].replace(/^\.\//, '')}`));
    const missing = [...loaded].filter((p) => p !== '/sw.js' && !listed.has(p));
    assert.deepEqual(missing, []);
  });

  assert.deepEqual(errors, []);
});
