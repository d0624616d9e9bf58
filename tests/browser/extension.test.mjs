// The engine in a Manifest V3 extension's service worker: the example
// extension (examples/extension) built into a temporary folder and loaded
// into headless Chromium (Debian's `chromium`, whose new headless mode runs
// extensions) by playwright-core. The popup adds a note and searches
// through chrome.runtime messages; the service worker is then stopped, as
// Chrome does to an idle one, and the note must still be found by the
// worker that the next message starts. Skips, saying why, like
// browser.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildExtension } from '../../examples/extension/build.mjs';
import { chromiumPath, playwright, skip } from './chromium.mjs';

test('the example extension runs the engine in its service worker', { skip, timeout: 120_000 }, async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-extension-'));
  const ext = buildExtension(path.join(tmp, 'extension'));
  const context = await playwright.chromium.launchPersistentContext(path.join(tmp, 'profile'), {
    executablePath: chromiumPath,
    headless: true,
    args: [`--disable-extensions-except=${ext}`, `--load-extension=${ext}`],
  });
  t.after(async () => {
    await context.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  let [worker] = context.serviceWorkers();
  worker ??= await context.waitForEvent('serviceworker', { timeout: 30_000 });
  const { host: id, pathname } = new URL(worker.url());
  assert.equal(pathname, '/background.js');

  const popup = await context.newPage();
  const errors = [];
  popup.on('pageerror', (err) => errors.push(err.message));
  const open = async () => {
    await popup.goto(`chrome-extension://${id}/popup.html`);
    await popup.waitForSelector('body[data-ready=true], #message:not([hidden])', { timeout: 60_000 });
    assert.equal(await popup.getAttribute('body', 'data-ready'), 'true', await popup.textContent('#message'));
    return popup.getAttribute('body', 'data-started');
  };
  const message = async () => {
    await popup.waitForSelector('#message:not([hidden])');
    return { text: await popup.textContent('#message'), error: await popup.$eval('#message', (el) => el.classList.contains('error')) };
  };
  const addNote = async ({ title, text, folder = 'notes/inbox' }) => {
    await popup.evaluate(() => document.getElementById('message').setAttribute('hidden', ''));
    await popup.fill('#title', title);
    await popup.fill('#text', text);
    await popup.fill('#folder', folder);
    await popup.click('#add button[type=submit]');
    return message();
  };
  const search = async (q) => {
    await popup.fill('#search', q);
    await popup.waitForSelector(`body[data-searched="${q}"]`);
    return popup.$$eval('#results li .path', (els) => els.map((el) => el.textContent));
  };

  const firstStart = await open();
  assert.match(await popup.textContent('#status'), /^0 notes in IndexedDB "arbor-notes"/);

  const added = await addNote({ title: 'Invoice retry policy', text: 'Failed invoices are retried three times, then escalated to finance.' });
  assert.equal(added.error, false, added.text);
  assert.equal(added.text, 'Saved as notes/inbox/invoice_retry_policy.md.');
  assert.deepEqual((await search('invoices retried')).slice(0, 1), ['notes/inbox/invoice_retry_policy.md']);

  const refused = await addNote({ title: 'Escape', text: 'should not be written', folder: '../outside' });
  assert.equal(refused.error, true, refused.text);
  assert.match(refused.text, /^Not saved: .*(invalid path|not allowed)/i);
  await popup.waitForFunction(() => /^1 note /.test(document.getElementById('status').textContent));

  // Stop the service worker as Chrome stops an idle one, and wait until it is.
  const cdp = await context.newCDPSession(popup);
  const stopped = new Promise((resolve) => {
    cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
      if (versions.some((v) => v.scriptURL === worker.url() && v.runningStatus === 'stopped')) resolve();
    });
  });
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await stopped;
  await cdp.detach();

  // The popup's next message starts a new worker, which opens the memory
  // again from IndexedDB.
  const secondStart = await open();
  assert.notEqual(secondStart, firstStart, 'a new service worker answered');
  assert.match(await popup.textContent('#status'), /^1 note in IndexedDB/);
  assert.deepEqual((await search('escalated to finance')).slice(0, 1), ['notes/inbox/invoice_retry_policy.md']);
  assert.deepEqual((await search('escape should not be written')).filter((p) => /escape/.test(p)), []);

  assert.deepEqual(errors, [], 'no uncaught errors in the popup');
});
