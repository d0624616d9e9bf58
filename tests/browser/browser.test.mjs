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
import { runaway } from '../runaway.mjs';
import { chromiumPath, playwright, repo, skip } from './chromium.mjs';

test('the web demo and the package in headless Chromium', { skip, timeout: 180_000 }, async (t) => {
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
    await page.evaluate(() => {
      const meta = document.getElementById('search-meta');
      meta.textContent = '';
      delete meta.dataset.query;
    });
    await page.fill('#search', q);
    // The line of the last keystroke's search, not of an earlier prefix's
    // that finished while the typing went on.
    await page.waitForFunction((q) => document.getElementById('search-meta').dataset.query === q && document.getElementById('search').value === q, q);
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

  await t.test('a first visitor loads the sample notes and sees search and curation work at once', async () => {
    // A context of its own: a first visit, with an empty IndexedDB.
    const visit = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const tab = await visit.newPage();
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(server.url);
    await tab.waitForSelector('body[data-ready=true]', { timeout: 30_000 });
    assert.match(await tab.textContent('#tree'), /Load the sample notes/);
    const sample = Object.keys(readTree(path.join(repo, 'examples/notes'))).filter((p) => p.endsWith('.md'));
    const entries = sample.filter((p) => !p.endsWith('/context.md')).length;

    await tab.click('#sample-button');
    await tab.waitForSelector('#message:not([hidden])');
    assert.equal(await tab.textContent('#message'), `Loaded the sample notes: ${sample.length} files.`);
    assert.match(await tab.textContent('#status'), new RegExp(`^${entries} entries in 4 domains`));
    // The sample question is searched at once, and the answer's entry ranks first.
    const question = 'how often are failed invoices retried';
    await tab.waitForFunction((q) => document.getElementById('search-meta').dataset.query === q, question);
    assert.equal(await tab.inputValue('#search'), question);
    assert.equal(await tab.textContent('#results li:first-child .path'), 'engineering/billing/invoice_retry_policy.md');
    assert.match(await tab.textContent('#tree'), /Invoice Retry Policy/);

    // Search as you type finds another part of the sample.
    await tab.fill('#search', 'korean tokenizer');
    await tab.waitForFunction((q) => document.getElementById('search-meta').dataset.query === q, 'korean tokenizer');
    assert.equal(await tab.textContent('#results li:first-child .path'), 'research/retrieval/korean_tokenizer_findings.md');

    // Curation on the sample: a note related to an entry shows among its backlinks.
    await tab.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await tab.fill('#note-domain', 'engineering');
    await tab.fill('#note-topic', 'billing');
    await tab.fill('#note-title', 'Retry emails');
    await tab.fill('#note-text', 'Each failed retry sends the customer an email with a link to update the card.');
    await tab.fill('#note-relations', 'engineering/billing/invoice_retry_policy.md');
    await tab.fill('#note-reason', 'agreed with support');
    await tab.click('#note-form button[type=submit]');
    await tab.waitForSelector('#message:not([hidden])');
    assert.match(await tab.textContent('#message'), /engineering\/billing\/retry_emails\.md \(added\)/);
    // The added note opens; only then is the page ours to navigate (the
    // message shows before the app moves to the note, which would
    // otherwise land after the navigation below).
    await tab.waitForFunction(() => document.getElementById('entry-path').textContent === 'engineering/billing/retry_emails.md');
    await tab.goto(`${server.url}#/entry/engineering/billing/invoice_retry_policy.md`);
    await tab.waitForSelector('body[data-ready=true]', { timeout: 30_000 });
    await tab.waitForFunction(() => document.getElementById('entry-path').textContent === 'engineering/billing/invoice_retry_policy.md');
    assert.ok((await tab.$$eval('#entry-backlinks a', (as) => as.map((a) => a.textContent))).includes('engineering/billing/retry_emails.md'));

    // Loaded again, nothing is replaced: every file is already there.
    await tab.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await tab.click('#sample-button');
    await tab.waitForSelector('#message:not([hidden])');
    assert.match(await tab.textContent('#message'), new RegExp(`^Loaded the sample notes: 0 files\\. Skipped ${sample.length}: `));
    await visit.close();
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

  await t.test('mem.ingest in a Web Worker, with the lifecycle option passed on', async () => {
    const out = await page.evaluate(async () => {
      const { openMemoryInWorker } = await import('/bindings/js/worker.js');
      const mem = await openMemoryInWorker({ storage: { kind: 'memory' }, fixedTime: '2026-01-01T00:00:00Z', lifecycle: { initialImportance: 70 } });
      const files = [
        { name: 'notes/deploy.md', content: '# Deploy\n\n## Canary\n\n5% of traffic for 30 minutes.\n' },
        { name: 'people.csv', content: 'name,role\nAna,lead\n' },
      ];
      const first = await mem.ingest(files);
      const again = await mem.ingest(files);
      const hit = await mem.search('canary traffic');
      const asked = await mem.query('canary traffic');
      await mem.close();
      return { first: first.summary, again: again.summary, top: hit.results[0]?.path, lifecycle: asked.results[0]?.lifecycle };
    });
    assert.deepEqual(out.first, { files: 2, failedFiles: 0, added: 2, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    assert.deepEqual(out.again, { files: 2, failedFiles: 0, added: 0, updated: 0, deleted: 0, unchanged: 2, failed: 0 });
    assert.equal(out.top, 'notes/deploy/deploy.md');
    // The worker passes the lifecycle option on (the default importance is 50).
    assert.equal(out.lifecycle?.importance, 70);
    assert.equal(out.lifecycle?.maturity, 'validated');
  });

  await t.test('sandbox limits: a deadline ends the worker, which reopens on the saved tree; read-only; the memory cap', async () => {
    const out = await page.evaluate(
      async ({ runaway }) => {
        const { openMemoryInWorker } = await import('/bindings/js/worker.js');
        const { openMemory, indexedDB, deleteIndexedDB } = await import('/bindings/js/index.js');
        const code = (p) => p.then(() => 'answered', (err) => err.code);
        // n operations and a last one with a misspelt key, which refuses the
        // call once all are decoded: much work and memory, nothing written.
        const heavy = (n) => [...Array.from({ length: n }, (_, i) => ({ type: 'ADD', path: 'notes/misc', title: `Note ${i}`, content: 'text', reason: 'test' })), { type: 'ADD', path: 'notes/misc', title: 'Typo', contnet: 'text', reason: 'test' }];
        // A call that never returns, twice: each time its worker is ended,
        // and the second runs in a new one.
        const stuck = await openMemoryInWorker({ storage: { kind: 'indexedDB', name: 'runaway' }, wasm: new Uint8Array(runaway), callTimeoutMs: 50 });
        const stopped = [await code(stuck.stats()), await code(stuck.stats())];
        await stuck.close();
        // The real engine: what a call saved survives the end of its worker.
        await deleteIndexedDB('sandbox');
        const op = (title) => [{ type: 'ADD', path: 'notes/sandbox', title, content: { narrative: 'The zebra crossing got new paint.' }, reason: 'test' }];
        const mem = await openMemoryInWorker({ storage: { kind: 'indexedDB', name: 'sandbox' }, callTimeoutMs: 500 });
        await mem.curate(op('Zebra crossing'));
        const slow = await code(mem.curate(heavy(100000))); // seconds of work
        const kept = (await mem.search('zebra')).results.map((r) => r.path);
        await mem.close();
        // Read-only, with the memory capped, on the page's own thread.
        const ro = await openMemory({ storage: indexedDB('sandbox'), readOnly: true, maxMemoryBytes: 32 << 20, onOutput: () => {} });
        const refused = await code(ro.curate(op('Another')));
        const capped = await code(ro.call('stats', { pad: 'x'.repeat(40 << 20) })); // does not fit
        const after = (await ro.search('zebra')).total;
        await ro.close();
        const check = indexedDB('sandbox');
        await check.load();
        const files = Object.keys(check.snapshot()).filter((p) => p.startsWith('notes/'));
        check.close();
        return { stopped, slow, kept, refused, capped, after, files };
      },
      { runaway: [...runaway()] },
    );
    assert.deepEqual(out.stopped, ['deadline', 'deadline']);
    assert.equal(out.slow, 'deadline');
    assert.deepEqual(out.kept, ['notes/sandbox/zebra_crossing.md']);
    assert.equal(out.refused, 'read_only');
    assert.equal(out.capped, 'memory_limit');
    assert.equal(out.after, 1);
    assert.deepEqual(out.files, ['notes/context.md', 'notes/sandbox/context.md', 'notes/sandbox/zebra_crossing.md']);
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

  await t.test('IndexedDB keeps the files\' times: an open after a reload reads none of the unchanged files', async () => {
    const reads = await page.evaluate(async () => {
      const { startEngine, indexedDB, deleteIndexedDB } = await import('/bindings/js/index.js');
      await deleteIndexedDB('times');
      const saved = indexedDB('times');
      await saved.load();
      for (let i = 0; i < 20; i++) saved.write(`notes/log/n${i}.md`, new TextEncoder().encode(`---\ntitle: Note ${i}\n---\n\nText ${i}.\n`));
      await saved.commit();
      saved.close();
      // Each open a minute after the writes, by the clock that stamps the
      // files and the engine's alike: their times can be trusted.
      const realNow = Date.now;
      Date.now = () => realNow() + 60_000;
      try {
        const open = async () => {
          const storage = indexedDB('times');
          const read = [];
          const counted = new Proxy(storage, {
            get: (s, k) => {
              if (k === 'read') return (p) => (p.startsWith('.arbor/') || read.push(p), s.read(p));
              const v = Reflect.get(s, k);
              return typeof v === 'function' ? v.bind(s) : v;
            },
          });
          const engine = await startEngine({ storage: counted });
          for (const method of ['open', 'close']) {
            const out = JSON.parse(await engine.request(JSON.stringify({ id: 1, method, params: {} })));
            if (out.error) throw new Error(`${method}: ${out.error.message}`);
          }
          await storage.commit(); // the catalog and the index the close wrote
          await engine.dispose();
          storage.close();
          return read.length;
        };
        return [await open(), await open()];
      } finally {
        Date.now = realNow;
      }
    });
    assert.ok(reads[0] >= 20, `the first open read ${reads[0]} files`);
    assert.equal(reads[1], 0, 'the open after a reload read the unchanged files again');
  });

  await t.test('a reopened memory reads its persisted index by range from IndexedDB (fs_read_at)', async () => {
    const out = await page.evaluate(async () => {
      const { startEngine, indexedDB, memory } = await import('/bindings/js/index.js');
      const storage = indexedDB('conformance'); // persisted by the conformance run
      await storage.load();
      let ranges = 0;
      const counted = { ...storage, readAt: (p, into, offset) => (ranges++, storage.readAt(p, into, offset)) };
      const search = async (engine) => {
        await engine.request(JSON.stringify({ id: 1, method: 'open', params: {} }));
        const res = JSON.parse(await engine.request(JSON.stringify({ id: 2, method: 'search', params: { query: 'invoice retry', limit: 10 } })));
        await engine.dispose();
        return res.result.results.map((h) => h.path);
      };
      const stored = await search(await startEngine({ storage: counted }));
      // The same files without .arbor: an index built in memory.
      const files = Object.fromEntries(Object.entries(storage.snapshot()).filter(([p]) => !p.startsWith('.arbor/')));
      storage.close();
      const built = await search(await startEngine({ storage: memory(files) }));
      return { ranges, stored, built };
    });
    assert.ok(out.ranges > 0, 'no segment was read by range');
    assert.ok(out.stored.length > 0);
    assert.deepEqual(out.stored, out.built);
  });

  await t.test('two tabs on one database: each sees the other\'s writes, none is lost or overwritten', async () => {
    const other = await context.newPage();
    other.on('pageerror', (err) => errors.push(err.message));
    await other.goto(server.url);
    await other.waitForSelector('body[data-ready=true]', { timeout: 30_000 });
    const tabs = [page, other];

    // The demo in both tabs: a note written in one shows up in the other
    // without a reload (onExternalChange refreshes its status).
    const before = Number((await status()).match(/^(\d+)/)[1]);
    const m = await writeNote({ domain: 'operations', topic: 'oncall', title: 'Pager rotation', text: 'The pager rotates every Monday at noon.', reason: 'agreed at standup' });
    assert.equal(m.error, false, m.text);
    await other.waitForFunction((n) => document.getElementById('status').textContent.startsWith(`${n} entries`), before + 1);

    // The package in both tabs, on a database of their own.
    await page.evaluate(() => import('/bindings/js/index.js').then((m) => m.deleteIndexedDB('tabs')));
    await Promise.all(
      tabs.map((p, i) =>
        p.evaluate(async (tab) => {
          const { openMemory, indexedDB } = await import('/bindings/js/index.js');
          window.reloads = 0;
          window.tab = tab;
          window.mem = await openMemory({ storage: indexedDB('tabs'), onExternalChange: () => window.reloads++ });
        }, i === 0 ? 'A' : 'B'),
      ),
    );
    const inTab = (p, fn, arg) => p.evaluate(fn, arg);
    const add = (title, content) => ({ type: 'ADD', path: 'shared/log', title, content, reason: 'two-tab test' });

    // Written in A, found in B, which reloads first.
    const a1 = await inTab(page, (op) => window.mem.curate(op), add('Deploy freeze', 'No deploys on Fridays after noon.'));
    assert.equal(a1.applied[0].status, 'success');
    const found = await inTab(other, () => window.mem.search('deploys fridays'));
    assert.equal(found.results[0]?.path, 'shared/log/deploy_freeze.md');
    await other.waitForFunction(() => window.reloads >= 1);

    // B reads only what A changed: its engine keeps running, with the
    // accesses it has not written yet (a restart would drop them).
    const reads = await inTab(other, async () => {
      for (let i = 0; i < 3; i++) await window.mem.read('shared/log/deploy_freeze.md');
      return window.reloads;
    });
    await inTab(page, (op) => window.mem.curate(op), add('Standup time', 'Standup is at 9:30.'));
    assert.equal((await inTab(other, () => window.mem.search('standup'))).results[0]?.path, 'shared/log/standup_time.md');
    await other.waitForFunction((n) => window.reloads > n, reads);
    const accesses = await inTab(other, async () => {
      await window.mem.flush();
      const file = (await window.mem.exportFiles()).find((f) => f.path === '.arbor/state.json');
      return file ? (JSON.parse(new TextDecoder().decode(file.data)).entries['shared/log/deploy_freeze.md']?.accesses ?? 0) : 0;
    });
    assert.equal(accesses, 3, `accesses recorded by B: ${accesses}`);

    // B, which has not seen A's newer entry when it writes, must not replace it.
    await inTab(other, () => window.mem.stats());
    const a2 = await inTab(page, (op) => window.mem.curate(op), add('Release owner', 'Ana owns the June release.'));
    assert.equal(a2.applied[0].status, 'success');
    const b2 = await inTab(other, (op) => window.mem.curate(op), add('Release owner', 'Bo owns the June release.'));
    assert.equal(b2.applied[0].status, 'failed');
    assert.match(b2.applied[0].message, /already exists/);
    assert.match((await inTab(other, () => window.mem.read('shared/log/release_owner.md'))).markdown, /Ana owns/);

    // A changes the entry B has read; B then adds a fact to it: A's words stay.
    const upd = (content, reason) => ({ type: 'UPDATE', path: 'shared/log/release_owner.md', content, reason });
    const a3 = await inTab(page, (op) => window.mem.curate(op), upd({ narrative: 'Ana owns the June release; Bo backs her up.' }, 'tab A edits'));
    assert.equal(a3.applied[0].status, 'success');
    const b3 = await inTab(other, (op) => window.mem.curate(op), upd({ facts: ['release date: June 12'] }, 'tab B adds a fact'));
    assert.equal(b3.applied[0].status, 'success');
    const both = (await inTab(other, () => window.mem.read('shared/log/release_owner.md'))).markdown;
    assert.match(both, /Bo backs her up/);
    assert.match(both, /June 12/);

    // Both tabs writing at once, into the same folder: every entry lands.
    const each = 4;
    await Promise.all(
      tabs.map((p) =>
        p.evaluate(async (n) => {
          const writes = [];
          for (let i = 0; i < n; i++) {
            writes.push(window.mem.curate({ type: 'ADD', path: 'shared/log', title: `Note ${window.tab}${i}`, content: `Written by tab ${window.tab}, number ${i}.`, reason: 'concurrent' }));
          }
          const done = await Promise.all(writes);
          if (done.some((r) => r.applied[0].status !== 'success')) throw new Error(JSON.stringify(done.map((r) => r.applied[0])));
        }, each),
      ),
    );
    const want = 3 + 2 * each; // deploy_freeze, standup_time, release_owner and the notes
    for (const p of tabs) assert.equal((await inTab(p, () => window.mem.stats())).entries, want);
    const fresh = await inTab(page, async () => {
      const { openMemory, indexedDB } = await import('/bindings/js/index.js');
      const mem = await openMemory({ storage: indexedDB('tabs') });
      const paths = (await mem.search('written by tab', { limit: 50 })).results.map((r) => r.path).filter((p) => p.startsWith('shared/log/note_')).sort();
      const entries = (await mem.stats()).entries;
      await mem.close();
      return { paths, entries };
    });
    assert.equal(fresh.entries, want);
    const names = ['A', 'B'].flatMap((t) => Array.from({ length: each }, (_, i) => `shared/log/note_${t.toLowerCase()}${i}.md`));
    assert.deepEqual(fresh.paths, names.sort());

    // Below the locks: a commit made on an older tree is refused, the newer file kept.
    const guarded = await inTab(page, async () => {
      const { indexedDB } = await import('/bindings/js/index.js');
      const bytes = (s) => new TextEncoder().encode(s);
      const [s1, s2] = [indexedDB('tabs'), indexedDB('tabs')];
      await Promise.all([s1.load(), s2.load()]);
      s1.write('shared/log/raw.md', bytes('first'));
      await s1.commit();
      s2.write('shared/log/raw.md', bytes('stale'));
      const refused = await s2.commit().then(() => null, (err) => err.message);
      const kept = new TextDecoder().decode(s2.read('shared/log/raw.md'));
      const generations = [s1.generation, s2.generation];
      s1.close();
      s2.close();
      return { refused, kept, generations };
    });
    assert.match(guarded.refused ?? 'saved', /another tab or worker saved changes/);
    assert.equal(guarded.kept, 'first');
    assert.equal(guarded.generations[0], guarded.generations[1]);

    await Promise.all(tabs.map((p) => inTab(p, () => window.mem.close())));
    await other.close();
  });

  assert.deepEqual(errors, [], 'no uncaught errors in the page');
});
