// The extension's service worker, the one place the engine runs. The popup
// (and any other page of the extension) asks it through chrome.runtime
// messages. Chrome stops an idle service worker after about 30 seconds and
// starts it again for the next message: the memory is opened on the first
// message after each start, from IndexedDB, where every change was saved
// before its answer was sent, so a stop loses nothing.

import { openMemory, indexedDB } from './arbor/bindings/js/index.js';

const DB_NAME = 'arbor-notes';
/** Lifecycle signals (access counts) are batched by the engine; write them this long after the last message, well before Chrome stops an idle worker. */
const FLUSH_AFTER_MS = 5_000;

/** When this worker started: the popup shows it, and the tests see a restart by it. */
const startedAt = new Date().toISOString();

/** @type {Promise<import('./arbor/bindings/js/index.js').ArborMemory> | null} */
let opening = null;
let flushTimer = 0;

/** The memory, opened once per worker start. The wasm is the package's arbor/dist/arbor.wasm, found next to its JS files. */
function memory() {
  opening ??= openMemory({ storage: indexedDB(DB_NAME) }).catch((err) => {
    opening = null; // the next message tries again
    throw err;
  });
  return opening;
}

const ops = {
  async add({ folder, title, text }) {
    const mem = await memory();
    const { applied } = await mem.curate({
      type: 'ADD',
      path: String(folder ?? '').trim() || 'notes/inbox',
      title: String(title ?? '').trim(),
      content: { narrative: String(text ?? '').trim() },
      reason: 'noted from the browser',
    });
    const [op] = applied;
    if (op.status !== 'success') throw Object.assign(new Error(op.message), { code: 'curate_failed' });
    return { path: op.path };
  },
  async search({ query, limit = 8 }) {
    const mem = await memory();
    return (await mem.search(String(query ?? ''), { limit })).results;
  },
  async read({ path }) {
    return (await memory()).read(path);
  },
  async status() {
    const mem = await memory();
    const { entries } = await mem.stats();
    return { entries, startedAt, database: DB_NAME };
  },
};

function scheduleFlush() {
  clearTimeout(flushTimer);
  flushTimer = setTimeout(() => {
    opening?.then((mem) => mem.flush()).catch((err) => console.error(`arbor: flush: ${err.message}`));
  }, FLUSH_AFTER_MS);
}

// Registered synchronously at the top level, as Chrome requires, so that a
// message that starts the worker is delivered to it.
chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id || !Object.hasOwn(ops, message?.op)) return false;
  ops[message.op](message)
    .then(
      (value) => sendResponse({ ok: true, value }),
      (err) => sendResponse({ ok: false, error: { code: err?.code ?? 'internal', message: err?.message ?? String(err) } }),
    )
    .finally(scheduleFlush);
  return true; // the answer is sent asynchronously
});
