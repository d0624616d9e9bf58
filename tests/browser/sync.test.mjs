// mem.sync in headless Chromium: a memory in IndexedDB syncs with a git
// remote on another origin (git http-backend behind tests/gitserver.mjs,
// which answers CORS requests itself, as a CORS proxy would), against a
// Node memory in a folder syncing with the same remote, until both hold
// the same tree. The page loads isomorphic-git's UMD build, as a page
// without a bundler does, and the package's sync/core.js.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../../web-demo/serve.mjs';
import { openMemory, nodeFs } from '../../bindings/js/index.node.js';
import { gitSync } from '../../bindings/js/sync/node.js';
import { bareRepo, serveGit, folderFiles, skip as skipWithoutGit } from '../gitserver.mjs';
import { chromiumPath, playwright, repo, skip as skipWithoutChromium } from './chromium.mjs';

const skip = skipWithoutChromium || skipWithoutGit;
const TOKEN = 'browser-token';
const auth = { token: TOKEN };

/**
 * A script that runs the CommonJS packages given (each needing only those
 * before it) and keeps their exports in globalThis.__cjs, by name.
 *
 * @param {string[]} names
 */
function commonJS(names) {
  return names
    .map((name) => {
      const src = fs.readFileSync(path.join(repo, 'node_modules', name, 'index.js'), 'utf8');
      return `(() => { const module = { exports: {} }; const exports = module.exports; const require = (n) => globalThis.__cjs[n];\n${src}\n;(globalThis.__cjs ??= {})[${JSON.stringify(name)}] = module.exports; })();\n`;
    })
    .join('');
}

const entry = (title, summary, narrative) =>
  `---\ntitle: ${title}\nsummary: ${summary}\ncreatedAt: 2026-01-05T09:00:00Z\nupdatedAt: 2026-01-05T09:00:00Z\n---\n\n## Narrative\n${narrative}\n`;

test('an IndexedDB memory in Chromium and a folder in Node converge through a git remote over HTTP', { skip, timeout: 180_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-sync-browser-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  bareRepo(dir, 'team.git');
  const gitServer = await serveGit({ root: dir, token: TOKEN });
  const web = await serve({ port: 0 });
  const browser = await playwright.chromium.launch({ executablePath: chromiumPath });
  t.after(async () => {
    await browser.close();
    await web.close();
    await gitServer.close();
  });
  const remote = `${gitServer.url}/team.git`;
  assert.notEqual(new URL(remote).origin, new URL(web.url).origin, 'the remote is cross-origin');

  // Alice, in Node, starts the remote.
  const aliceDir = path.join(dir, 'alice');
  const files = {
    'ops/billing/refunds.md': entry('Refunds', 'Refunds up to 100 EUR.', 'Support approves refunds up to 100 EUR.'),
    'ops/pager/rotation.md': entry('Pager rotation', 'The pager rotates weekly.', 'The pager rotates every Monday.'),
  };
  for (const [p, s] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(aliceDir, p)), { recursive: true });
    fs.writeFileSync(path.join(aliceDir, p), s);
  }
  const alice = await openMemory({ storage: nodeFs(aliceDir), git: gitSync(), watch: false });
  t.after(() => alice.close());
  assert.equal((await alice.sync({ remote, auth })).merge, 'initial');

  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(web.url);
  // isomorphic-git in a browser needs a global Buffer: the `buffer` package,
  // which a bundler provides; here its CommonJS files are loaded as they are.
  await page.addScriptTag({ content: commonJS(['base64-js', 'ieee754', 'buffer']) + 'globalThis.Buffer = globalThis.__cjs.buffer.Buffer;' });
  await page.addScriptTag({ path: path.join(repo, 'node_modules/isomorphic-git/index.umd.min.js') });
  await page.addScriptTag({ path: path.join(repo, 'node_modules/isomorphic-git/http/web/index.umd.js') });

  /** Runs `fn` in the page on an open IndexedDB memory that syncs; closes it after. */
  const inPage = (body, arg) =>
    page.evaluate(
      async ({ body, arg }) => {
        const { openMemory, indexedDB } = await import('/bindings/js/index.js');
        const { gitSyncWith } = await import('/bindings/js/sync/core.js');
        const mem = await openMemory({ storage: indexedDB('sync-test'), git: gitSyncWith({ git: globalThis.git, http: globalThis.GitHttp }) });
        try {
          return await new Function('mem', 'arg', `return (async () => { ${body} })()`)(mem, arg);
        } finally {
          await mem.close();
        }
      },
      { body, arg },
    );

  await page.evaluate(async () => {
    const { deleteIndexedDB } = await import('/bindings/js/index.js');
    await deleteIndexedDB('sync-test');
  });
  // The page starts from the remote, then works while Alice does.
  const first = await inPage(
    `const rep = await mem.sync({ remote: arg.remote, auth: arg.auth });
     const hit = (await mem.search('pager rotates')).results[0]?.path;
     await mem.curate([
       { type: 'UPDATE', path: 'ops/billing/refunds.md', summary: 'Refunds up to 120 EUR.', reason: 'the page raised it' },
       { type: 'ADD', path: 'ops/oncall', title: 'Pairing', content: 'New engineers shadow two rotations first.', reason: 'pairing' },
     ]);
     return { merge: rep.merge, changed: rep.changed, hit };`,
    { remote, auth },
  );
  assert.equal(first.merge, 'fast-forward');
  assert.deepEqual(first.changed, Object.keys(files).sort());
  assert.equal(first.hit, 'ops/pager/rotation.md');

  const cr = await alice.curate([
    { type: 'UPDATE', path: 'ops/billing/refunds.md', summary: 'Refunds up to 150 EUR.', reason: 'alice raised it' },
    { type: 'UPDATE', path: 'ops/pager/rotation.md', content: { narrative: { text: 'The pager rotates every Monday at ten.' } }, reason: 'the hour' },
  ]);
  assert.equal(cr.summary.failed, 0);
  assert.equal((await alice.sync({ auth })).merge, 'none');

  // The page reopens its memory (the repository was saved in IndexedDB with the tree) and merges.
  const second = await inPage(
    `const before = await mem.syncStatus({ auth: arg.auth });
     const steps = [];
     const rep = await mem.sync({ auth: arg.auth, onProgress: (s) => steps.push(s.phase + ' ' + s.round) });
     return { before, steps, merge: rep.merge, conflicts: rep.conflicts, ahead: rep.ahead, behind: rep.behind };`,
    { auth },
  );
  assert.equal(second.before.behind, 1, JSON.stringify(second.before));
  // The page's curate: its two entries, and the context files of the folders the ADD made.
  assert.deepEqual(second.before.unsynced, ['ops/billing/refunds.md', 'ops/context.md', 'ops/oncall/context.md', 'ops/oncall/pairing.md']);
  assert.deepEqual(second.steps, ['commit 0', 'fetch 1', 'merge 1', 'push 1']);
  assert.equal(second.merge, 'merge');
  assert.deepEqual(second.conflicts, ['ops/billing/refunds.md']);
  assert.equal(second.behind, 1);
  assert.equal(second.ahead, 2);

  const back = await alice.sync({ auth });
  assert.equal(back.merge, 'fast-forward');

  // Both hold the same bytes and answer alike.
  const pageSide = await inPage(
    `const st = await mem.syncStatus({ auth: arg.auth });
     const files = {};
     for (const f of await mem.exportFiles()) if (!f.path.startsWith('.arbor/')) files[f.path] = new TextDecoder().decode(f.data);
     const answers = [];
     for (const q of arg.queries) answers.push((await mem.query(q)).results.map((r) => r.path));
     return { st, files, answers };`,
    { auth, queries: ['when does the pager rotate', 'refund limit', 'new engineers shadow'] },
  );
  assert.deepEqual({ ahead: pageSide.st.ahead, behind: pageSide.st.behind, unsynced: pageSide.st.unsynced }, { ahead: 0, behind: 0, unsynced: [] });
  const aliceFiles = Object.fromEntries(Object.entries(folderFiles(aliceDir)).map(([p, b]) => [p, b.toString()]));
  assert.deepEqual(Object.fromEntries(Object.entries(pageSide.files).sort(([a], [b]) => (a < b ? -1 : 1))), aliceFiles);
  for (const s of ['150 EUR', '120 EUR', '## Merge Conflict']) assert.ok(aliceFiles['ops/billing/refunds.md'].includes(s), s);
  assert.ok(aliceFiles['ops/pager/rotation.md'].includes('Monday at ten'));
  assert.ok(aliceFiles['ops/oncall/pairing.md']?.includes('shadow'));
  const aliceAnswers = [];
  for (const q of ['when does the pager rotate', 'refund limit', 'new engineers shadow']) aliceAnswers.push((await alice.query(q)).results.map((r) => r.path));
  assert.deepEqual(pageSide.answers, aliceAnswers);

  // The browser went through CORS: its preflights were answered.
  assert.ok(gitServer.requests.some((r) => r.method === 'OPTIONS'), 'no CORS preflight was seen');
  assert.deepEqual(errors, []);
});
