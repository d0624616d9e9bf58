// The engine in a real browser: headless Chromium (Debian's `chromium`)
// driven by playwright-core against the web demo served by
// web-demo/serve.mjs. Skips, saying why, when chromium, playwright-core
// or dist/arbor.wasm is missing; .ci/run installs chromium so CI always
// runs it (chromium.mjs). ARBOR_SCREENSHOT=path saves a screenshot of the
// demo there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../../web-demo/serve.mjs';
import { compare, digest, loadExpected, loadFixture, normalize, requests } from '../conformance/fixture.mjs';
import { readTree } from '../tree.mjs';
import { chromiumPath, playwright, repo, skip } from './chromium.mjs';

test('the web demo and the package in headless Chromium', { skip, timeout: 120_000 }, async (t) => {
  const server = await serve({ port: 0 });
  const browser = await playwright.chromium.launch({ executablePath: chromiumPath });
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('dialog', (d) => d.accept());

  const ready = async () => {
    await page.waitForSelector('body[data-ready=true]', { timeout: 30_000 });
  };
  const status = () => page.textContent('#status');
  const message = async () => {
    await page.waitForSelector('#message:not([hidden])');
    return { text: await page.textContent('#message'), error: await page.$eval('#message', (el) => el.classList.contains('error')) };
  };
  const writeNote = async ({ domain, topic, title, text, reason, relation = '' }) => {
    await page.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await page.fill('#note-domain', domain);
    await page.fill('#note-topic', topic);
    await page.fill('#note-title', title);
    await page.fill('#note-text', text);
    await page.fill('#note-relations', relation);
    await page.fill('#note-reason', reason);
    await page.click('#note-form button[type=submit]');
    return message();
  };
  const search = async (q) => {
    // Cleared first, so that the meta line of an earlier search (the same
    // words typed before an import, say) is not taken for this one's.
    await page.evaluate(() => (document.getElementById('search-meta').textContent = ''));
    await page.fill('#search', q);
    await page.waitForFunction((q) => document.getElementById('search-meta').textContent !== '' && document.getElementById('search').value === q, q);
    await page.waitForTimeout(50); // let a late answer for an older keystroke be dropped
    return page.$$eval('#results li', (lis) =>
      lis.map((li) => ({ path: li.querySelector('.path').textContent, marked: [...li.querySelectorAll('mark')].map((m) => m.textContent), score: li.querySelector('.score').textContent })),
    );
  };

  await t.test('the page loads the wasm and opens an empty tree', async () => {
    await page.goto(server.url);
    await ready();
    assert.match(await status(), /^0 entries/);
    assert.match(await page.textContent('#llm-note'), /No LLM is configured/);
  });

  await t.test('a note added is found by search as you type, with tier, score and latency', async () => {
    const m = await writeNote({ domain: 'engineering', topic: 'billing', title: 'Invoice retry policy', text: 'Failed invoices are retried three times, then escalated to finance.', reason: 'agreed in the billing sync' });
    assert.equal(m.error, false, m.text);
    assert.match(m.text, /engineering\/billing\/invoice_retry_policy\.md \(added\)/);
    const hits = await search('invoice retr');
    assert.equal(hits[0]?.path, 'engineering/billing/invoice_retry_policy.md');
    assert.ok(hits[0].marked.some((w) => /invoice/i.test(w)), `highlighted: ${hits[0].marked}`);
    assert.match(hits[0].score, /^score 0\.\d{4}$/);
    assert.match(await page.textContent('#search-meta'), /tier \d \(.+\) · engine [\d.]+ ms/);
  });

  await t.test('a reload keeps the note (IndexedDB)', async () => {
    await page.reload();
    await ready();
    assert.match(await status(), /^1 entry/);
    assert.equal((await search('escalated finance'))[0]?.path, 'engineering/billing/invoice_retry_policy.md');
  });

  await t.test('a bad path shows an error and loses nothing', async () => {
    const m = await writeNote({ domain: '..', topic: 'etc', title: 'Escape', text: 'should not be written', reason: 'testing a bad path' });
    assert.equal(m.error, true, m.text);
    assert.match(m.text, /invalid path|not allowed/i);
    assert.match(await status(), /^1 entry/);
    assert.deepEqual((await search('escape written')).filter((h) => /escape/.test(h.path)), []);
    assert.equal((await search('invoice retry'))[0]?.path, 'engineering/billing/invoice_retry_policy.md');
  });

  await t.test('relations and backlinks are links; merge and delete work', async () => {
    const m = await writeNote({ domain: 'engineering', topic: 'billing', title: 'Retry schedule', text: 'Retries run one, three and seven days after the failure.', reason: 'from the runbook', relation: 'engineering/billing/invoice_retry_policy.md' });
    assert.equal(m.error, false, m.text);
    await page.waitForFunction(() => document.getElementById('entry-heading').textContent === 'Retry schedule');
    await page.click('#entry-relations a');
    await page.waitForFunction(() => document.getElementById('entry-heading').textContent === 'Invoice retry policy');
    assert.deepEqual(await page.$$eval('#entry-backlinks a', (as) => as.map((a) => a.getAttribute('href'))), ['#/entry/engineering/billing/retry_schedule.md']);

    // Merge the schedule into the policy.
    await page.click('#entry-backlinks a');
    await page.waitForFunction(() => document.getElementById('entry-heading').textContent === 'Retry schedule');
    await page.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await page.fill('#merge-target', 'engineering/billing/invoice_retry_policy.md');
    await page.click('#merge-form button[type=submit]');
    const merged = await message();
    assert.equal(merged.error, false, merged.text);
    await page.waitForFunction(() => document.getElementById('entry-heading').textContent === 'Invoice retry policy');
    assert.match(await page.textContent('#entry-markdown'), /seven days/);
    assert.match(await status(), /^1 entry/);

    await page.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await page.click('#delete-form button[type=submit]');
    const deleted = await message();
    assert.equal(deleted.error, false, deleted.text);
    await page.waitForFunction(() => /^0 entries/.test(document.getElementById('status').textContent));
  });

  await t.test('import a folder of markdown, export a zip', async (tt) => {
    await page.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await page.setInputFiles('#import-input', path.join(repo, 'examples/notes'));
    const m = await message();
    assert.equal(m.error, false, m.text);
    // The folder's context.md files the first notes created are kept, not replaced.
    const original = readTree(path.join(repo, 'examples/notes'));
    const kept = ['engineering/billing/context.md', 'engineering/context.md'];
    const want = Object.keys(original).filter((p) => p.endsWith('.md')).length - kept.length;
    assert.equal(m.text, `Imported ${want} files. Skipped 2: ${kept.map((p) => `${p} (a different file is already there)`).sort().reverse().join('; ')}.`);
    const hits = await search('how many times are failed invoices retried');
    assert.equal(hits[0]?.path, 'engineering/billing/invoice_retry_policy.md');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-zip')]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-export-'));
    tt.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const zip = path.join(dir, 'notes.zip');
    await download.saveAs(zip);
    if (fs.existsSync('/usr/bin/unzip')) {
      execFileSync('unzip', ['-q', zip, '-d', path.join(dir, 'out')], { env: { ...process.env, LC_ALL: 'C.UTF-8' } });
      const exported = readTree(path.join(dir, 'out'));
      for (const [p, text] of Object.entries(original)) if (!kept.includes(p)) assert.equal(exported[p], text, `${p} comes back unchanged`);
    }

    if (process.env.ARBOR_SCREENSHOT) {
      await page.goto(`${server.url}#/entry/engineering/billing/invoice_retry_policy.md`);
      await ready();
      await page.waitForSelector('#entry-panel:not([hidden])');
      await search('invoice retry');
      await page.evaluate(() => {
        document.getElementById('message').setAttribute('hidden', '');
        window.scrollTo(0, 0);
      });
      await page.screenshot({ path: process.env.ARBOR_SCREENSHOT, fullPage: false });
    }
  });

  await t.test('works offline once loaded (service worker)', async () => {
    await page.evaluate(() => navigator.serviceWorker.ready);
    await context.setOffline(true);
    try {
      await page.reload();
      await ready();
      assert.match(await status(), /entries/);
      assert.equal((await search('invoice retry'))[0]?.path, 'engineering/billing/invoice_retry_policy.md');
    } finally {
      await context.setOffline(false);
    }
  });

  await t.test('on the main thread: a refused save (quota) is a clear error and leaves no partial entry', async () => {
    const out = await page.evaluate(async () => {
      const { openMemory, indexedDB, deleteIndexedDB } = await import('/bindings/js/index.js');
      await deleteIndexedDB('quota-test');
      const op = (title) => ({ type: 'ADD', path: 'notes/quota', title, content: `About ${title}.`, reason: 'quota test' });
      const mem = await openMemory({ storage: indexedDB('quota-test') });
      await mem.curate(op('kept'));
      const put = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function () {
        throw new DOMException('the quota is full', 'QuotaExceededError');
      };
      let error;
      try {
        await mem.curate(op('refused'));
      } catch (err) {
        error = { code: err.code, message: err.message };
      } finally {
        IDBObjectStore.prototype.put = put;
      }
      const live = (await mem.stats()).entries;
      const readRefused = await mem.read('notes/quota/refused.md').then(() => 'found', (err) => err.code);
      await mem.close();
      const again = await openMemory({ storage: indexedDB('quota-test') });
      const saved = (await again.stats()).entries;
      await again.close();
      return { error, live, readRefused, saved };
    });
    assert.equal(out.error?.code, 'io');
    assert.match(out.error.message, /quota is full/);
    assert.equal(out.live, 1);
    assert.equal(out.readRefused, 'not_found');
    assert.equal(out.saved, 1);
  });

  await t.test('the conformance fixture gives the same results as in Node (IndexedDB storage)', async () => {
    const fixture = loadFixture();
    const tree = readTree(path.join(repo, fixture.tree));
    const out = await page.evaluate(
      async ({ tree, reqs }) => {
        const { startEngine, indexedDB, deleteIndexedDB } = await import('/bindings/js/index.js');
        await deleteIndexedDB('conformance');
        const storage = indexedDB('conformance');
        await storage.load();
        for (const [p, text] of Object.entries(tree)) storage.write(p, new TextEncoder().encode(text));
        await storage.commit();
        const engine = await startEngine({ storage });
        const responses = [];
        for (const r of reqs) {
          responses.push(await engine.request(r));
          await storage.commit();
        }
        await engine.dispose();
        storage.close();
        // What a reload finds in the database.
        const reloaded = indexedDB('conformance');
        await reloaded.load();
        const files = reloaded.snapshot();
        reloaded.close();
        return { responses, files };
      },
      { tree, reqs: requests(fixture) },
    );
    const files = Object.fromEntries(Object.entries(out.files).map(([p, text]) => [p, digest(Buffer.from(text, 'utf8'))]));
    const problems = compare('chromium', loadExpected(), out.responses.map(normalize), files);
    assert.ok(problems.length === 0, problems.join('\n'));
  });

  assert.deepEqual(errors, [], 'no uncaught errors in the page');
});
