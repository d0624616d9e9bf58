// End to end: the package entry, the real dist/arbor.wasm, real storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
// Through the package's own name, so the exports map is tested too.
import { openMemory, nodeFs, memory, ArborError, version } from 'arbor-memory';
import { openMemoryInWorker } from 'arbor-memory/worker';
import { skipWithoutWasm, tmpdir, invoiceOp, wasmURL, defer } from './_engine.mjs';

const fixedTime = '2026-01-01T00:00:00Z';
const entryPath = 'engineering/billing/invoice_retry_policy.md';

const rejectsWith = (code) => (err) => {
  assert.ok(err instanceof ArborError, `not an ArborError: ${err}`);
  assert.equal(err.code, code, err.message);
  assert.ok(err.message.length > 0);
  return true;
};

test('the package exports its version, the one package.json gives', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
  assert.equal(version, pkg.version);
});

test('every WASI import of the module is implemented or stubbed', { skip: skipWithoutWasm }, async (t) => {
  const module = await WebAssembly.compile(fs.readFileSync(wasmURL));
  const { WASI } = await import('../wasi.js');
  const implemented = Object.keys(new WASI().functions());
  const wasi = WebAssembly.Module.imports(module).filter((i) => i.module === 'wasi_snapshot_preview1').map((i) => i.name);
  const host = WebAssembly.Module.imports(module).filter((i) => i.module === 'arbor_host').map((i) => i.name);
  t.diagnostic(`WASI imports: ${wasi.join(', ')}`);
  t.diagnostic(`stubbed with ENOSYS: ${wasi.filter((n) => !implemented.includes(n)).join(', ') || 'none'}`);
  // The linker keeps only the imports the module calls; the host must
  // provide every import of docs/ABI.md, and the module may use no other.
  const documented = ['embed', 'fs_append', 'fs_list', 'fs_lock', 'fs_read', 'fs_read_at', 'fs_remove', 'fs_rename', 'fs_stat', 'fs_swap', 'fs_unlock', 'fs_walk', 'fs_write', 'log'];
  assert.deepEqual(host.filter((n) => !documented.includes(n)), []);
  for (const n of documented.filter((n) => n !== 'fs_rename')) assert.ok(host.includes(n), n);
  const { ArborHost } = await import('../abi.js');
  const provided = Object.keys(new ArborHost({ storage: memory() }).imports).sort();
  assert.deepEqual(provided, documented);
  const others = WebAssembly.Module.imports(module).filter((i) => i.module !== 'wasi_snapshot_preview1' && i.module !== 'arbor_host');
  assert.deepEqual(others, []);
});

test('curate, search, query, read, tree, stats on a folder', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  assert.deepEqual(mem.opened, { entries: 0, contexts: 0, warnings: [], index: { reused: 0, indexed: 0, removed: 0 } });

  const res = await mem.curate([invoiceOp]);
  assert.deepEqual(res.summary, { added: 1, updated: 0, merged: 0, deleted: 0, moved: 0, failed: 0 });
  assert.equal(res.applied.length, 1);
  assert.equal(res.applied[0].type, 'ADD');
  assert.equal(res.applied[0].path, entryPath);
  assert.equal(res.applied[0].status, 'success');
  assert.ok(fs.existsSync(path.join(dir, entryPath)));
  assert.ok(fs.existsSync(path.join(dir, 'engineering', 'context.md')));

  const found = await mem.search('invoice retry', { limit: 5 });
  assert.equal(found.query, 'invoice retry');
  assert.equal(found.results[0].path, entryPath);
  assert.equal(found.results[0].kind, 'entry');
  assert.equal(found.results[0].title, 'Invoice retry policy');
  assert.ok(found.results[0].score > 0 && found.results[0].score < 1);
  assert.ok(found.total >= 1);

  const answer = await mem.query('how often are failed invoices retried?');
  assert.equal(typeof answer.tier, 'number');
  assert.equal(typeof answer.tierName, 'string');
  assert.equal(typeof answer.needsLLM, 'boolean');
  assert.equal(answer.outOfDomain, false);
  assert.ok(answer.results.some((r) => r.path === entryPath));

  const entry = await mem.read(entryPath);
  assert.equal(entry.kind, 'entry');
  assert.equal(entry.title, 'Invoice retry policy');
  assert.deepEqual(entry.tags, ['billing']);
  assert.deepEqual(entry.keywords, ['invoice', 'retry']);
  assert.equal(entry.createdAt, fixedTime);
  assert.match(entry.markdown, /Failed invoices are retried three times/);
  assert.equal(entry.markdown, fs.readFileSync(path.join(dir, entryPath), 'utf8'));

  const root = await mem.tree();
  const domain = root.children.find((n) => n.name === 'engineering');
  assert.equal(domain.kind, 'domain');
  const topic = domain.children.find((n) => n.name === 'billing');
  assert.equal(topic.kind, 'topic');
  assert.ok(topic.children.some((n) => n.kind === 'entry' && n.path === entryPath));
  const shallow = await mem.tree({ path: 'engineering', depth: 1 });
  assert.equal(shallow.path, 'engineering');

  const stats = await mem.stats();
  assert.equal(stats.entries, 1);
  assert.deepEqual(stats.domains, { engineering: 1 });
  assert.ok(stats.contexts >= 2);

  // A failed operation is a result, not a rejection, and changes nothing.
  const before = fs.readFileSync(path.join(dir, entryPath), 'utf8');
  const again = await mem.curate([invoiceOp]);
  assert.equal(again.applied[0].status, 'failed');
  assert.ok(again.applied[0].message.length > 0);
  assert.equal(again.summary.failed, 1);
  assert.equal(again.summary.added, 0);
  assert.equal(fs.readFileSync(path.join(dir, entryPath), 'utf8'), before);

  // Closing writes the lifecycle signals (the read above was an access);
  // it must run before the folder is removed.
  await mem.close();
  const state = JSON.parse(fs.readFileSync(path.join(dir, '.arbor', 'state.json'), 'utf8'));
  assert.ok(state.entries[entryPath].accesses >= 1);
  // A folder kept in git shares its entries, not the engine's state.
  assert.equal(fs.readFileSync(path.join(dir, '.arbor', '.gitignore'), 'utf8').split('\n').at(-2), '*');
});

test('errors reject with ArborError and its code', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ storage: memory(), fixedTime });
  defer(t, () => mem.close());
  await assert.rejects(mem.call('no_such_method'), rejectsWith('unknown_method'));
  await assert.rejects(mem.search('x', { limit: 'ten' }), rejectsWith('invalid_params'));
  await assert.rejects(mem.search('x', { limit: 1000 }), rejectsWith('invalid_params'));
  await assert.rejects(mem.call('curate', { operations: 'nope' }), rejectsWith('invalid_params'));
  // A misspelt key is refused, naming it, rather than dropped with its text.
  await assert.rejects(
    mem.curate([{ type: 'ADD', path: 'a/b', title: 'T', contnet: { narrative: 'lost' }, reason: 'r' }]),
    (err) => err.code === 'invalid_params' && /unknown key "contnet" \(did you mean "content"\?\)/.test(err.message));
  await assert.rejects(mem.read('../etc/passwd'), rejectsWith('invalid_path'));
  await assert.rejects(mem.read('engineering/missing.md'), rejectsWith('not_found'));
  // The memory still works after errors.
  assert.equal((await mem.stats()).entries, 0);
});

test('close: later calls reject with not_open; closing twice is fine', { skip: skipWithoutWasm }, async () => {
  const mem = await openMemory({ fixedTime });
  await mem.close();
  await mem.close();
  await assert.rejects(mem.stats(), rejectsWith('not_open'));
});

test('curate on memory() storage', { skip: skipWithoutWasm }, async (t) => {
  const store = memory();
  const mem = await openMemory({ storage: store, fixedTime });
  defer(t, () => mem.close());
  const res = await mem.curate(invoiceOp);
  assert.equal(res.applied[0].status, 'success');
  const files = store.snapshot();
  assert.match(files[entryPath], /^---\ntitle: Invoice retry policy\n/);
  assert.ok('engineering/context.md' in files);
  assert.ok(Object.keys(files).every((p) => !/\.tmp$/.test(p)));
  assert.equal((await mem.search('escalated')).results[0]?.path, entryPath);
});

test('move(): an entry moves with the links to it, a folder too; a failed move changes nothing', { skip: skipWithoutWasm }, async (t) => {
  const store = memory();
  const mem = await openMemory({ storage: store, fixedTime });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp, { type: 'ADD', path: 'engineering/billing', title: 'Dunning emails', content: { relations: [entryPath] }, reason: 'r' }]);
  const moved = 'finance/billing/invoice_retry_policy.md';
  const res = await mem.move(entryPath, 'finance/billing', 'finance owns billing');
  assert.equal(res.applied[0].status, 'success', res.applied[0].message);
  assert.equal(res.applied[0].to, moved);
  assert.equal(res.summary.moved, 1);
  assert.deepEqual((await mem.read(moved)).backlinks, ['engineering/billing/dunning_emails.md']);
  assert.equal((await mem.search('escalated')).results[0]?.path, moved);

  const before = store.snapshot();
  const failed = await mem.move(moved, 'engineering/billing/dunning_emails.md', 'r');
  assert.equal(failed.applied[0].status, 'failed');
  assert.match(failed.applied[0].message, /already exists/);
  assert.deepEqual(Object.keys(store.snapshot()).filter((p) => !p.startsWith('.arbor/')), Object.keys(before).filter((p) => !p.startsWith('.arbor/')));

  const folder = await mem.curate({ type: 'move', path: 'engineering', to: 'finance', reason: 'one domain' });
  assert.equal(folder.applied[0].to, 'finance/engineering');
  assert.deepEqual((await mem.read(moved)).backlinks, ['finance/engineering/billing/dunning_emails.md']);
});

test('context(): an entry with its relations and backlinks within a budget, by path or query', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ fixedTime });
  defer(t, () => mem.close());
  const dunning = 'engineering/billing/dunning_emails.md';
  await mem.curate([invoiceOp, { type: 'ADD', path: 'engineering/billing', title: 'Dunning emails', summary: 'reminders after each failed retry', content: { narrative: 'A reminder email goes out.', relations: [entryPath] }, reason: 'r' }]);
  const res = await mem.context({ path: entryPath });
  assert.equal(res.path, entryPath);
  assert.deepEqual(res.entries.map((e) => [e.path, e.depth, e.via, e.link, e.included]), [
    [entryPath, 0, undefined, undefined, 'full'],
    [dunning, 1, entryPath, 'backlink', 'full'],
  ]);
  assert.match(res.markdown, /^# Invoice retry policy\nPath: engineering\/billing\/invoice_retry_policy\.md\n/);
  assert.match(res.markdown, /\n\n# Dunning emails\nPath: engineering\/billing\/dunning_emails\.md \(links to engineering\/billing\/invoice_retry_policy\.md\)\nSummary: reminders after each failed retry\n/);
  assert.ok(res.tokens <= res.budget && res.budget === 2000 && res.depth === 1);
  const byQuery = await mem.context({ query: 'reminder email', depth: 0, budget: 100 });
  assert.equal(byQuery.path, dunning);
  assert.equal(byQuery.query, 'reminder email');
  assert.deepEqual(byQuery.entries.map((e) => e.path), [dunning]);
  await assert.rejects(mem.context({ path: entryPath, depth: 4 }), rejectsWith('invalid_params'));
  await assert.rejects(mem.context({ path: 'engineering/billing/nope.md' }), rejectsWith('not_found'));
});

test('recent() and status()', { skip: skipWithoutWasm }, async (t) => {
  const store = memory();
  const mem = await openMemory({ storage: store, fixedTime });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp, { type: 'ADD', path: 'ops/pager', title: 'Rota', content: 'weekly', reason: 'r' }]);
  const recent = await mem.recent({ since: '7d', domain: 'engineering' });
  assert.equal(recent.total, 1);
  assert.deepEqual(recent.entries.map((e) => [e.path, e.changed, e.changedFrom]), [[entryPath, fixedTime, 'frontMatter']]);
  assert.equal(recent.since, '2025-12-25T00:00:00Z');
  assert.equal((await mem.recent({ limit: 1 })).entries.length, 1);
  await assert.rejects(mem.recent({ since: 'lately' }), rejectsWith('invalid_params'));
  const status = await mem.status();
  assert.equal(status.entries, 2);
  assert.deepEqual(status.domains, { engineering: 1, ops: 1 });
  assert.equal(status.recent, 2);
  assert.equal(status.lastChanged, fixedTime);
  assert.equal(status.healthy, true);
  assert.equal(status.changed.scanned, true);
});

test('search() and query() take filters and sort', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ fixedTime });
  defer(t, () => mem.close());
  const add = (path, title, tags) => ({ type: 'ADD', path, title, content: { narrative: `${title}: invoice notes.`, tags }, reason: 'r' });
  await mem.curate([add('engineering/billing', 'Invoice retry', ['billing']), add('ops/billing', 'Invoice runbook', ['Billing', 'payments']), add('ops/pager', 'Invoice pager', [])]);
  const paths = (r) => r.results.map((h) => h.path);
  assert.deepEqual(paths(await mem.search('invoice', { domain: 'ops', tags: ['billing'] })), ['ops/billing/invoice_runbook.md']);
  assert.equal(paths(await mem.search('invoice', { topic: 'billing', limit: 1, maturity: ['draft'], since: '1d' })).length, 1);
  assert.deepEqual(paths(await mem.search('invoice', { maturity: ['core'] })), []);
  // Reading an entry raises its importance: first by importance at once.
  await mem.read('ops/pager/invoice_pager.md');
  assert.equal(paths(await mem.search('invoice', { sort: 'importance' }))[0], 'ops/pager/invoice_pager.md');
  const q = await mem.query('invoice', { sort: 'importance', minImportance: 51, limit: 10 });
  assert.deepEqual(paths(q), ['ops/pager/invoice_pager.md']);
  await assert.rejects(mem.search('invoice', { sort: 'title' }), rejectsWith('invalid_params'));
  await assert.rejects(mem.query('invoice', { until: 'later' }), rejectsWith('invalid_params'));
});

test('calls queue in order without awaiting each', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ fixedTime });
  defer(t, () => mem.close());
  const ops = ['alpha', 'beta', 'gamma'].map((w) => ({ ...invoiceOp, title: `Policy ${w}`, reason: w }));
  const pending = [mem.curate(ops[0]), mem.search('policy'), mem.curate(ops[1]), mem.curate(ops[2]), mem.stats()];
  const [a, s1, b, c, stats] = await Promise.all(pending);
  assert.deepEqual([a, b, c].map((r) => r.applied[0].status), ['success', 'success', 'success']);
  assert.equal(s1.results.length, 1, 'the search ran after the first curate only');
  assert.equal(stats.entries, 3);
});

test('reopening a folder finds what was curated', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const first = await openMemory({ storage: nodeFs(dir), fixedTime });
  await first.curate(invoiceOp);
  await first.close();
  const second = await openMemory({ storage: nodeFs(dir) });
  defer(t, () => second.close());
  assert.equal(second.opened.entries, 1);
  assert.equal((await second.search('invoice retry')).results[0].path, entryPath);
  assert.equal((await second.read(entryPath)).createdAt, fixedTime);
  await second.close(); // before the folder is removed: it writes the read's access
});

test('the module can be passed as bytes or a compiled module', { skip: skipWithoutWasm }, async () => {
  const bytes = fs.readFileSync(wasmURL);
  const module = await WebAssembly.compile(bytes);
  for (const wasm of [bytes, module, wasmURL, wasmURL.pathname]) {
    const mem = await openMemory({ wasm, fixedTime });
    assert.equal((await mem.stats()).entries, 0);
    await mem.close();
  }
});

test('a person editing the folder while a memory is open: nothing they wrote is lost', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  // Not watching: what is tested is the stamp check of each write, which
  // holds whether or not the memory has heard of the edit yet.
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime, watch: false });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp]);
  const file = path.join(dir, entryPath);
  // An editor adds a sentence to the rules.
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('then escalated.', 'then escalated. Finance reviews them monthly.'));
  // The memory adds a fact: the sentence stays, and search finds it.
  const upd = { type: 'UPDATE', path: entryPath, reason: 'r', content: { facts: ['escalation goes to support'] } };
  assert.equal((await mem.curate([upd])).applied[0].status, 'success');
  const text = fs.readFileSync(file, 'utf8');
  assert.match(text, /Finance reviews them monthly\./);
  assert.match(text, /escalation goes to support/);
  assert.equal((await mem.search('finance monthly')).results[0]?.path, entryPath);
  // Replacing the rules the editor changed is a conflict that writes nothing.
  const replace = { type: 'UPDATE', path: entryPath, reason: 'r', content: { narrative: { rules: 'Two retries.' } } };
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('monthly', 'weekly'));
  const before = fs.readFileSync(file, 'utf8');
  const res = await mem.curate([replace]);
  assert.equal(res.applied[0].status, 'conflict');
  assert.equal(res.summary.failed, 1);
  assert.equal(fs.readFileSync(file, 'utf8'), before);
  // The editor deletes the file: the next update does not bring it back.
  fs.rmSync(file);
  assert.equal((await mem.curate([upd])).applied[0].status, 'conflict');
  assert.equal(fs.existsSync(file), false);
  await mem.close(); // before tmpdir's cleanup removes the folder
});

test('an operation made from the version read is a conflict when a person edited the entry since, even once the memory heard of it', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  const added = (await mem.curate([invoiceOp])).applied[0];
  const read = await mem.read(entryPath);
  assert.equal(read.version, added.version);
  assert.match(read.version, /^[0-9a-f]{16}$/);
  const file = path.join(dir, entryPath);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('then escalated.', 'then escalated. Finance reviews them monthly.'));
  await eventually('the edit', async () => (await mem.search('finance monthly')).results.length > 0);
  const replace = { type: 'UPDATE', path: entryPath, reason: 'r', content: { narrative: { rules: 'Two retries.' } } };
  const before = fs.readFileSync(file, 'utf8');
  const res = await mem.curate([{ ...replace, base: read.version }]);
  assert.equal(res.applied[0].status, 'conflict', res.applied[0].message);
  assert.equal(fs.readFileSync(file, 'utf8'), before);
  // From the version that holds the edit, it applies; its result's version is the next base.
  const now = await mem.read(entryPath);
  const done = (await mem.curate([{ ...replace, base: now.version }])).applied[0];
  assert.equal(done.status, 'success', done.message);
  assert.equal(done.version, (await mem.read(entryPath)).version);
  await mem.close();
});

test('a memory gives the version it read as the base of its next write: a person\'s edit since is not replaced unseen', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp]);
  await mem.read(entryPath);
  const file = path.join(dir, entryPath);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('then escalated.', 'then escalated. Finance reviews them monthly.'));
  await eventually('the edit', async () => (await mem.search('finance monthly')).results.length > 0);
  const replace = { type: 'UPDATE', path: entryPath, reason: 'r', content: { narrative: { rules: 'Two retries.' } } };
  const before = fs.readFileSync(file, 'utf8');
  const res = await mem.curate(replace);
  assert.equal(res.applied[0].status, 'conflict', res.applied[0].message);
  assert.equal(fs.readFileSync(file, 'utf8'), before);
  // Adding a fact replaces nothing the person changed: it applies, from the same version.
  const fact = { type: 'UPDATE', path: entryPath, reason: 'r', content: { facts: ['escalation goes to support'] } };
  assert.equal((await mem.curate(fact)).applied[0].status, 'success');
  // Read again, the replacement applies; the next write builds on the version written.
  await mem.read(entryPath);
  assert.equal((await mem.curate(replace)).applied[0].status, 'success');
  assert.equal((await mem.curate({ ...fact, content: { tags: ['billing'] } })).applied[0].status, 'success');
  assert.match(fs.readFileSync(file, 'utf8'), /Two retries\./);
  await mem.close();
});

/** Retries a check until it holds: a folder's watcher hears of a change a few ms after it is made. */
async function eventually(what, ok) {
  for (const deadline = Date.now() + 10_000; !(await ok()); ) {
    if (Date.now() > deadline) assert.fail(`${what}: not seen`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a memory on a folder answers from the files as they are now', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp]);
  const file = path.join(dir, entryPath);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('then escalated.', 'then escalated. Finance reviews them monthly.'));
  await eventually('the edit', async () => (await mem.search('finance monthly')).results[0]?.path === entryPath);
  const other = path.join(dir, 'sales/leads/intake.md');
  fs.mkdirSync(path.dirname(other), { recursive: true });
  fs.writeFileSync(other, '---\ntitle: Lead intake\n---\n\n## Narrative\nLeads are qualified within two days.\n');
  await eventually('a new folder', async () => (await mem.search('leads qualified')).results.length === 1);
  fs.rmSync(file);
  await eventually('the removal', async () => (await mem.search('finance monthly')).results.length === 0);
  await assert.rejects(mem.read(entryPath), rejectsWith('not_found'));
  await mem.close();
});

/** The inotify watches this process holds (Linux), or null where /proc does not tell. */
function inotifyWatches() {
  try {
    let n = 0;
    for (const fd of fs.readdirSync('/proc/self/fd')) {
      let target = '';
      try {
        target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        continue;
      }
      if (target.includes('inotify')) n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify')).length;
    }
    return n;
  } catch {
    return null;
  }
}

test('a folder memory watches each folder once, not each file, and follows folders that come and go', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const write = (p, title, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), `---\ntitle: ${title}\n---\n\n## Narrative\n${text}\n`);
  };
  for (let i = 0; i < 30; i++) write(`notes/log/n${i}.md`, `Note ${i}`, `Entry number ${i}.`);
  const before = inotifyWatches();
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  const after = inotifyWatches();
  if (before !== null && after !== null) {
    // The root, notes, notes/log: three folders; Node's recursive watch held one more per file.
    assert.equal(after - before, 3, `watches held for 30 files in 3 folders`);
  }
  // Folders made after the open are watched: a file written into one later is seen.
  fs.mkdirSync(path.join(dir, 'ops/pager'), { recursive: true });
  write('ops/pager/rotation.md', 'Pager rotation', 'The pager rotates weekly.');
  await eventually('a file in a new folder', async () => (await mem.search('pager rotates')).results.length === 1);
  // The folder's news is spent: only the new folder's own watcher can tell of this one.
  write('ops/pager/escalation.md', 'Escalation', 'Escalations go to the duty manager.');
  await eventually('a second file there', async () => (await mem.search('duty manager escalations')).results.length === 1);
  // A folder moved out of the tree takes its entries with it.
  fs.renameSync(path.join(dir, 'ops'), path.join(dir, '..', `${path.basename(dir)}-ops-moved`));
  t.after(() => fs.rmSync(path.join(dir, '..', `${path.basename(dir)}-ops-moved`), { recursive: true, force: true }));
  await eventually('the folder moved away', async () => (await mem.search('pager rotates')).results.length === 0);
  fs.rmSync(path.join(dir, 'notes'), { recursive: true });
  await eventually('the folder removed', async () => (await mem.search('entry number')).results.length === 0);
  await mem.close();
});

test('a folder memory hears the edits in a folder removed and made again, and in one renamed', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const write = (p, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), `---\ntitle: Pager rotation\n---\n\n## Narrative\n${text}\n`);
  };
  /** The paths of the entries a search for one word finds. */
  const found = async (word) => (await mem.search(word)).results.map((r) => r.path);
  write('ops/pager/rotation.md', 'The pager rotates on Mondays.');
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  // As a checkout switching branches does: the folder goes, and comes back at once.
  fs.rmSync(path.join(dir, 'ops/pager'), { recursive: true });
  write('ops/pager/rotation.md', 'The pager rotates on Tuesdays.');
  await eventually('the folder made again', async () => (await found('tuesdays')).length === 1);
  // The news of the folder's going and coming is spent: only a watcher of
  // the new folder can tell of the next edit.
  await new Promise((r) => setTimeout(r, 300));
  await mem.search('pager');
  write('ops/pager/rotation.md', 'The pager rotates on Wednesdays.');
  await eventually('an edit in it', async () => (await found('wednesdays')).length === 1);
  fs.renameSync(path.join(dir, 'ops/pager'), path.join(dir, 'ops/oncall'));
  await eventually('the folder renamed', async () => (await found('wednesdays'))[0] === 'ops/oncall/rotation.md');
  await new Promise((r) => setTimeout(r, 300));
  await mem.search('pager');
  write('ops/oncall/rotation.md', 'The pager rotates on Thursdays.');
  await eventually('an edit in the renamed folder', async () => (await found('thursdays')).length === 1);
  await mem.close();
});

test('a folder memory answers from a save made just before the call', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const file = path.join(dir, 'ops/pager/rotation.md');
  const save = (text) => {
    // An editor's atomic save: a temporary file renamed over the entry.
    fs.writeFileSync(`${file}.tmp`, `---\ntitle: Pager rotation\n---\n\n## Narrative\n${text}\n`);
    fs.renameSync(`${file}.tmp`, file);
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  save('The pager rotates on Mondays.');
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  // The watcher hears of a save on the event loop's next turn: a call
  // made at once (a person saves, an agent asks) must not answer first.
  for (const day of ['Tuesdays', 'Wednesdays']) {
    await new Promise((r) => setTimeout(r, 50));
    save(`The pager rotates on ${day}.`);
    assert.deepEqual((await mem.search(day)).results.map((r) => r.path), ['ops/pager/rotation.md'], day);
    assert.equal((await mem.search('Mondays')).results.length, 0);
  }
  await mem.close();
});

test('refresh(): a scan finds what changed while nobody watched', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime, watch: false });
  defer(t, () => mem.close());
  const file = path.join(dir, 'ops/pager/rotation.md');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '---\ntitle: Pager rotation\n---\n\n## Narrative\nThe pager rotates weekly.\n');
  assert.equal((await mem.search('pager rotates')).results.length, 0);
  const res = await mem.refresh();
  assert.equal(res.scanned, true);
  assert.equal(res.added, 1);
  assert.equal((await mem.search('pager rotates')).results.length, 1);
  fs.rmSync(file);
  assert.equal((await mem.refresh(['ops/pager'])).removed, 1);
  await mem.close();
});

/**
 * Makes fs.watch behave as Linux's inotify at its limits, for one test: no
 * more than `watches` folders watched (fs.watch throws ENOSPC after), and
 * no more than `queue` events heard in one turn of the event loop (the rest
 * dropped, as the kernel drops them past fs.inotify.max_queued_events,
 * which the storage reads).
 */
function inotifyLimits(t, { watches = Infinity, queue = Infinity }) {
  const { watch, readFileSync } = fs;
  let held = 0;
  let heard = 0;
  fs.readFileSync = (p, ...rest) => (p === '/proc/sys/fs/inotify/max_queued_events' && queue !== Infinity ? `${queue}\n` : readFileSync(p, ...rest));
  fs.watch = (dir, options, listener) => {
    if (held >= watches) throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${dir}'`), { code: 'ENOSPC' });
    held++;
    const w = watch(dir, options, (...args) => {
      if (heard++ === 0) setImmediate(() => (heard = 0));
      if (heard <= queue) listener(...args);
    });
    const close = w.close.bind(w);
    w.close = () => {
      held--;
      close();
    };
    return w;
  };
  t.after(() => Object.assign(fs, { watch, readFileSync }));
}

test('a folder memory past the limit of watches scans, and does not crash', { skip: skipWithoutWasm || process.platform !== 'linux' }, async (t) => {
  const dir = tmpdir(t);
  const write = (p, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), `---\ntitle: Note\n---\n\n## Narrative\n${text}\n`);
  };
  write('ops/pager/rotation.md', 'The pager rotates on Mondays.');
  inotifyLimits(t, { watches: 3 }); // the root, ops, ops/pager
  const logs = [];
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime, onLog: (level, msg) => logs.push(`${level} ${msg}`) });
  defer(t, () => mem.close());
  // A folder made now cannot be watched: the watcher's callback threw
  // ENOSPC, which ended the process.
  write('ops/oncall/handover.md', 'Handover is at nine.');
  await eventually('a file in a folder past the limit', async () => (await mem.search('handover nine')).results.length === 1);
  await new Promise((r) => setTimeout(r, 300));
  await mem.search('handover');
  write('ops/oncall/handover.md', 'Handover is at ten.');
  write('ops/later/note.md', 'Another folder past the limit.');
  await eventually('an edit in the folder no watch hears', async () => (await mem.search('handover ten')).results.length === 1);
  // Said once, with what raises the limit: the scans cost the person CPU until then.
  assert.deepEqual(
    logs.filter((l) => l.includes('could not be watched')),
    ["warn a folder of the root could not be watched (the system's limit of watches, fs.inotify.max_user_watches on Linux): the tree is also scanned for changes, every 2 s"],
  );
  await mem.close();
});

test('a folder memory scans after more events than the kernel queues', { skip: skipWithoutWasm || process.platform !== 'linux' }, async (t) => {
  const dir = tmpdir(t);
  const write = (p, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), `---\ntitle: Note\n---\n\n## Narrative\n${text}\n`);
  };
  for (let i = 0; i < 20; i++) write(`notes/n${i}.md`, `Word first${i}x.`);
  inotifyLimits(t, { queue: 16 });
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  // One burst (a checkout): the events past the queue are lost, and Node
  // does not say so.
  for (let i = 0; i < 20; i++) write(`notes/n${i}.md`, `Word second${i}y.`);
  for (let i = 0; i < 20; i++) write(`ops/d${i}/e.md`, `Word third${i}z.`);
  await new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < 20; i++) {
    assert.equal((await mem.search(`second${i}y`)).results.length, 1, `the edit of notes/n${i}.md`);
    assert.equal((await mem.search(`third${i}z`)).results.length, 1, `ops/d${i}/e.md`);
  }
  // The folders made in the burst are watched.
  for (let i = 0; i < 20; i++) write(`ops/d${i}/e.md`, `Word fourth${i}w.`);
  await new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < 20; i++) await eventually(`an edit in ops/d${i}`, async () => (await mem.search(`fourth${i}w`)).results.length === 1);
  await mem.close();
});

test('a storage that cannot watch is scanned before calls instead', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const base = nodeFs(dir);
  const logs = [];
  const storage = { ...base, changes() { throw new Error('no inotify left'); } };
  const mem = await openMemory({ storage, fixedTime, onLog: (level, msg) => logs.push(`${level} ${msg}`) });
  defer(t, () => mem.close());
  assert.match(logs.join('\n'), /warn watching the storage failed.*no inotify left/);
  const file = path.join(dir, 'ops/pager/rotation.md');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '---\ntitle: Pager rotation\n---\n\n## Narrative\nThe pager rotates weekly.\n');
  await eventually('the new file', async () => (await mem.search('pager rotates')).results.length === 1);
  await mem.close();
});

test('onProgress: a big curate reports its operations and documents, in a worker too', { skip: skipWithoutWasm }, async (t) => {
  const n = 300;
  const ops = Array.from({ length: n }, (_, i) => ({ type: 'ADD', path: 'notes/log', title: `Note ${i}`, content: 'Text.', reason: 'progress test' }));
  const check = (got, label) => {
    for (const phase of ['write', 'index']) {
      const run = got.filter((p) => p.phase === phase);
      assert.ok(run.length >= 2, `${label}: ${phase} reported`);
      assert.equal(run[0].done, 0, `${label}: ${phase} starts at 0`);
      assert.ok(run[0].total >= n, `${label}: ${phase} total`);
      assert.equal(run.at(-1).done, run[0].total, `${label}: ${phase} ends at its total`);
      for (let i = 1; i < run.length; i++) assert.ok(run[i].done > run[i - 1].done, `${label}: ${phase} rising`);
    }
  };
  const got = [];
  const logged = [];
  const mem = await openMemory({ fixedTime, onProgress: (p) => got.push(p), onLog: (level, m) => logged.push(m) });
  defer(t, () => mem.close());
  await mem.curate(ops);
  check(got, 'openMemory');
  assert.ok(logged.every((m) => !m.startsWith('{"phase"')), 'no progress report reached onLog');

  const inWorker = [];
  const wmem = await openMemoryInWorker({ storage: { kind: 'nodeFs', dir: tmpdir(t) }, wasm: wasmURL, fixedTime, onProgress: (p) => inWorker.push(p) });
  defer(t, () => wmem.close());
  await wmem.curate(ops);
  check(inWorker, 'openMemoryInWorker');
});

test('an UPDATE keeps what a person wrote that the engine does not own: comments, unknown keys, a Facts section of code', { skip: skipWithoutWasm }, async (t) => {
  const p = 'eng/billing/retry.md';
  const human = '\uFEFF---\r\n# ask alice before changing the count\r\ntitle: Retry\r\nowner: alice # until June\r\nmeta:\r\n  team: billing\r\n---\r\n\r\n' +
    '## Facts\r\n- retries: 3\r\n\r\n```python\r\ndef backoff(n):\r\n    return 2 ** n\r\n```\r\n';
  const storage = memory({ [p]: human });
  const mem = await openMemory({ storage, fixedTime });
  defer(t, () => mem.close());
  const res = await mem.curate([{ type: 'UPDATE', path: p, content: { tags: ['billing'] }, reason: 'tag it' }]);
  assert.equal(res.applied[0].status, 'success', res.applied[0].message);
  const text = storage.snapshot()[p];
  for (const kept of ['# ask alice before changing the count\ntitle: Retry\n', '# until June\nowner: alice\n', 'meta: {team: billing}\n',
    'tags: [billing]\n', '## Facts\n- retries: 3\n\n```python\ndef backoff(n):\n    return 2 ** n\n```\n']) {
    assert.ok(text.includes(kept), `lost ${JSON.stringify(kept)}:\n${text}`);
  }
});

test('a folder with a link back up the tree opens: the link is listed, not walked', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'sub', 'a.md'), '---\ntitle: A\n---\nhello walkers\n');
  fs.symlinkSync('..', path.join(dir, 'sub', 'loop'));
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  const found = await mem.search('walkers', { limit: 5 });
  assert.deepEqual(found.results.map((r) => r.path), ['sub/a.md']);
});

test("a path through a link fails whole, saying why; deleting the link's folder keeps the link", { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const z = '---\ntitle: Z\n---\n\n## Narrative\nzebra crossing, must survive\n';
  fs.mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'a', 'c'));
  fs.writeFileSync(path.join(dir, 'a', 'b', 'x.md'), '---\ntitle: X\n---\n\n## Narrative\nx in b\n');
  fs.writeFileSync(path.join(dir, 'a', 'c', 'z.md'), z);
  fs.symlinkSync('../c', path.join(dir, 'a', 'b', 'link'));
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  for (const op of [
    { type: 'MERGE', path: 'a/b/link/z.md', mergeTarget: 'a/c/z.md', reason: 'duplicates' },
    { type: 'DELETE', path: 'a/b/link/z.md', reason: 'duplicate' },
    { type: 'MOVE', path: 'a/b/link/z.md', to: 'a/d/z.md', reason: 'move' },
    { type: 'UPDATE', path: 'a/b/link/z.md', title: 'Z', content: { tags: ['overwritten'] }, reason: 'edit' },
    { type: 'ADD', path: 'a/b/link', title: 'New', content: { tags: ['new'] }, reason: 'add' },
  ]) {
    const res = await mem.curate([op]);
    const a = res.applied[0];
    assert.equal(a.status, 'failed', `${op.type} ${op.path}: ${a.status} ${a.message}`);
    assert.match(a.message, /symbolic link/, `${op.type} ${op.path}`);
    assert.equal(fs.readFileSync(path.join(dir, 'a', 'c', 'z.md'), 'utf8'), z);
    assert.ok(fs.existsSync(path.join(dir, 'a', 'b', 'x.md')));
    assert.deepEqual(fs.readdirSync(path.join(dir, 'a', 'c')), ['z.md']);
  }
  const res = await mem.curate([{ type: 'DELETE', path: 'a/b', reason: 'drop b' }]);
  assert.equal(res.applied[0].status, 'success', res.applied[0].message);
  assert.ok(!fs.existsSync(path.join(dir, 'a', 'b', 'x.md')));
  assert.ok(fs.lstatSync(path.join(dir, 'a', 'b', 'link')).isSymbolicLink());
  assert.equal(fs.readFileSync(path.join(dir, 'a', 'c', 'z.md'), 'utf8'), z);
});

test('a linked folder is read once, under its own name, and a watching memory keeps no stale copy', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const write = (p, title, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), `---\ntitle: ${title}\n---\n\n## Narrative\n${text}\n`);
  };
  write('eng/deploy/deploy.md', 'Deploy steps', 'Deploys use the zebracorn pipeline.');
  write('misc/plain.md', 'Plain note', 'A plain note about quokkafish.');
  fs.mkdirSync(path.join(dir, 'ops'));
  fs.symlinkSync('../eng', path.join(dir, 'ops', 'alias'), 'dir');
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  /** The paths of the entries a search for one word finds. */
  const found = async (word) => (await mem.search(word)).results.map((r) => r.path);
  assert.deepEqual(await found('zebracorn'), ['eng/deploy/deploy.md']);
  write('eng/deploy/deploy.md', 'Deploy steps', 'Deploys use the okapiline pipeline.');
  await eventually('the edit', async () => JSON.stringify(await found('okapiline')) === '["eng/deploy/deploy.md"]');
  assert.deepEqual(await found('zebracorn'), []);
  // A link to a file, made while the memory watches.
  fs.symlinkSync('../misc/plain.md', path.join(dir, 'ops', 'plain.md'));
  write('misc/plain.md', 'Plain note', 'A plain note about wombatfish.');
  await eventually('the edit beside the link', async () => JSON.stringify(await found('wombatfish')) === '["misc/plain.md"]');
  assert.deepEqual(await found('quokkafish'), []);
  await mem.close();
});

// A folder MOVE carries what it does not edit by the storage's rename,
// unread: a file over the 64 MiB a MOVE used to read whole (refused then),
// and a FIFO (refused too), in a Node folder and in memory().
test('a folder MOVE carries a large file and a FIFO by renames, unread', { skip: skipWithoutWasm }, async (t) => {
  const note = '---\ntitle: Clip notes\n---\n\n## Narrative\nThe launch video.\n';
  const dir = tmpdir(t);
  fs.mkdirSync(path.join(dir, 'media', 'clips'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'media', 'clips', 'clip_notes.md'), note);
  fs.writeFileSync(path.join(dir, 'media', 'clips', 'launch.mp4'), '');
  fs.truncateSync(path.join(dir, 'media', 'clips', 'launch.mp4'), 100 << 20); // sparse
  const fifo = process.platform !== 'win32';
  if (fifo) execFileSync('mkfifo', [path.join(dir, 'media', 'clips', 'pipe.md')]);
  /** The storage s, with every path it reads added to reads. */
  const counted = (s, reads) => ({
    ...s,
    read: (p) => (reads.push(p), s.read(p)),
    ...(s.readAt && { readAt: (p, into, offset) => (reads.push(p), s.readAt(p, into, offset)) }),
  });
  const stores = [
    ['nodeFs', nodeFs(dir)],
    ['memory', memory({ 'media/clips/clip_notes.md': note, 'media/clips/launch.mp4': new Uint8Array(70 << 20) })],
  ];
  for (const [name, store] of stores) {
    const reads = [];
    const mem = await openMemory({ storage: counted(store, reads), fixedTime });
    defer(t, () => mem.close());
    const res = await mem.curate([{ type: 'MOVE', path: 'media/clips', to: 'archive/clips', reason: 'archive' }]);
    const a = res.applied[0];
    assert.equal(a.status, 'success', `${name}: ${a.message}`);
    assert.deepEqual(reads.filter((p) => p.endsWith('.mp4')), [], `${name}: the video was read`);
    assert.equal(store.stat('archive/clips/launch.mp4').size, name === 'nodeFs' ? 100 << 20 : 70 << 20, name);
    assert.throws(() => store.stat('media/clips'), (err) => err.code === 'ENOENT', `${name}: the old folder is left`);
    if (name === 'nodeFs' && fifo) assert.ok(fs.lstatSync(path.join(dir, 'archive', 'clips', 'pipe.md')).isFIFO());
    await mem.close();
  }
});
