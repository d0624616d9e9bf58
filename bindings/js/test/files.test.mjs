// Export and import of a whole tree (files.js, folder.js) and the saving
// contract of storages with `commit`: a save that fails leaves the memory
// exactly at its last saved state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openMemory, memory } from 'arbor-memory';
import { zipFiles } from '../folder.js';
import { invoiceOp, skipWithoutWasm, tmpdir, wasmURL } from './_engine.mjs';

const text = (b) => new TextDecoder().decode(b);

test('exportFiles gives every file; importFiles brings the markdown into another memory', { skip: skipWithoutWasm }, async () => {
  const a = await openMemory({ wasm: wasmURL });
  await a.curate(invoiceOp);
  const files = await a.exportFiles();
  await a.close();
  const entry = files.find((f) => f.path === 'engineering/billing/invoice_retry_policy.md');
  assert.ok(entry, `exported: ${files.map((f) => f.path).join(', ')}`);
  assert.match(text(entry.data), /retried three times/);
  assert.ok(files.some((f) => f.path.startsWith('.arbor/')), 'the engine folder is exported too');

  const store = memory({ 'engineering/billing/other.md': '# Other\n' });
  const b = await openMemory({ storage: store, wasm: wasmURL });
  const report = await b.importFiles([
    ...files,
    { path: 'notes/readme.txt', data: 'not markdown' },
    { path: 'notes/../escape.md', data: '# x' },
    { path: '.obsidian/app.md', data: '# x' },
    { path: 'engineering/billing/other.md', data: '# Changed\n' },
  ]);
  assert.ok(report.imported.includes('engineering/billing/invoice_retry_policy.md'));
  const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]));
  assert.equal(reasons['notes/readme.txt'], 'not a markdown file');
  assert.match(reasons['notes/../escape.md'], /malformed path/);
  assert.equal(reasons['.obsidian/app.md'], 'inside a hidden folder');
  assert.equal(reasons['engineering/billing/other.md'], 'a different file is already there');
  assert.ok(report.skipped.some((s) => s.path.startsWith('.arbor/')), '.arbor files are not imported');
  // Nothing was replaced, and the engine sees the imported entry.
  assert.equal(store.snapshot()['engineering/billing/other.md'], '# Other\n');
  const hits = await b.search('invoice retry');
  assert.equal(hits.results[0]?.path, 'engineering/billing/invoice_retry_policy.md');
  await b.close();
});

test('a failed save rolls the call back: the engine shows only what is saved', { skip: skipWithoutWasm }, async () => {
  // A storage that keeps a saved copy and can refuse the next commit, as
  // IndexedDB does when the quota is full.
  let saved = memory();
  let live = memory();
  let refuse = false;
  const copy = (from) => {
    const out = memory();
    for (const [p, c] of Object.entries(from.snapshot())) out.write(p, new TextEncoder().encode(c));
    return out;
  };
  const storage = {
    read: (p) => live.read(p),
    write: (p, b) => live.write(p, b),
    remove: (p) => live.remove(p),
    rename: (a, b) => live.rename(a, b),
    list: (p) => live.list(p),
    stat: (p) => live.stat(p),
    async commit() {
      if (refuse) {
        refuse = false;
        live = copy(saved);
        throw new Error('QuotaExceededError: the quota is full');
      }
      saved = copy(live);
    },
  };
  const mem = await openMemory({ storage, wasm: wasmURL });
  await mem.curate(invoiceOp);
  refuse = true;
  await assert.rejects(
    mem.curate({ ...invoiceOp, title: 'Card expiry reminders', content: 'Reminders go out 14 days before expiry.' }),
    (err) => err.code === 'io' && /not saved/.test(err.message) && /quota is full/.test(err.message),
  );
  await assert.rejects(mem.read('engineering/billing/card_expiry_reminders.md'), { code: 'not_found' });
  assert.equal((await mem.stats()).entries, 1);
  assert.deepEqual(Object.keys(saved.snapshot()).filter((p) => p.endsWith('.md')).sort(), Object.keys(live.snapshot()).filter((p) => p.endsWith('.md')).sort());
  // The memory keeps working after the failure.
  const again = await mem.curate({ ...invoiceOp, title: 'Card expiry reminders', content: 'Reminders go out 14 days before expiry.' });
  assert.equal(again.summary.added, 1);
  assert.ok('engineering/billing/card_expiry_reminders.md' in saved.snapshot());
  await mem.close();
});

test('zipFiles writes an archive unzip reads back byte for byte', { skip: fs.existsSync('/usr/bin/unzip') ? false : 'unzip is not installed' }, (t) => {
  const dir = tmpdir(t);
  const files = [
    { path: 'engineering/billing/invoice_retry_policy.md', data: new TextEncoder().encode('# Invoice retry\n') },
    { path: 'personal/values/올해의_목표.md', data: new TextEncoder().encode('# 목표\n') },
  ];
  const zip = path.join(dir, 'tree.zip');
  fs.writeFileSync(zip, zipFiles(files));
  // unzip honours the archive's UTF-8 flag only in a UTF-8 locale.
  const env = { ...process.env, LC_ALL: 'C.UTF-8' };
  execFileSync('unzip', ['-q', zip, '-d', path.join(dir, 'out')], { env });
  for (const f of files) assert.deepEqual(new Uint8Array(fs.readFileSync(path.join(dir, 'out', f.path))), f.data);
  execFileSync('unzip', ['-tq', zip], { env }); // CRCs check out
});
