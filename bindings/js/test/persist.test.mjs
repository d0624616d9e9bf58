// The persisted search index through Node: close (and flush) write
// .arbor/index through the storage adapter, a new instance reuses it and
// re-analyzes only what changed on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openMemory, nodeFs } from 'arbor-memory';
import { skipWithoutWasm, tmpdir, invoiceOp, defer } from './_engine.mjs';

const fixedTime = '2026-01-01T00:00:00Z';
const entryPath = 'engineering/billing/invoice_retry_policy.md';

// cp -p, rsync -a, tar x and touch -r write a file and set its time back:
// its size and time are what the catalog noted, its change time is new.
test('a reopened memory reads a file whose time a tool set back', { skip: skipWithoutWasm || (process.platform === 'win32' && 'nodeFs gives no change time on Windows') }, async (t) => {
  const dir = tmpdir(t);
  let mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  await mem.curate([invoiceOp]);
  await mem.close();
  // The catalog trusts only times clearly older than the open.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  const total = mem.opened.entries + mem.opened.contexts;
  await mem.close();

  const file = path.join(dir, entryPath);
  const before = fs.statSync(file, { bigint: true });
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll('retry', 'redos'));
  fs.utimesSync(file, Number(before.atimeNs) / 1e9, Number(before.mtimeNs) / 1e9);
  const after = fs.statSync(file, { bigint: true });
  assert.equal(after.size, before.size);
  assert.equal(after.mtimeNs / 1_000_000n, before.mtimeNs / 1_000_000n, 'the time the engine sees');
  mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  assert.deepEqual(mem.opened.index, { reused: total - 1, indexed: 1, removed: 0 });
  const found = await mem.search('redos');
  assert.deepEqual(found.results.map((r) => r.path), [entryPath]);
});

test('a reopened memory reuses the persisted index', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  let mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  await mem.curate([invoiceOp]);
  await mem.flush();
  assert.ok(fs.existsSync(path.join(dir, '.arbor/index/manifest.bin')));
  const before = await mem.search('invoice retry');
  await mem.close();

  mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  const total = mem.opened.entries + mem.opened.contexts;
  assert.ok(total >= 2);
  assert.deepEqual(mem.opened.index, { reused: total, indexed: 0, removed: 0 });
  const after = await mem.search('invoice retry');
  assert.deepEqual(after.results, before.results);
  await mem.close();

  const file = path.join(dir, entryPath);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8') + '\nThe pangolin desk handles escalations.\n');
  mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  defer(t, () => mem.close());
  assert.deepEqual(mem.opened.index, { reused: total - 1, indexed: 1, removed: 0 });
  const found = await mem.search('pangolin');
  assert.deepEqual(found.results.map((r) => r.path), [entryPath]);
});
