// The persisted search index through Node: close (and flush) write
// .arbor/index through the storage adapter, a new instance reuses it and
// re-analyzes only what changed on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openMemory, nodeFs } from 'arbor-memory';
import { skipWithoutWasm, tmpdir, invoiceOp, defer } from './_engine.mjs';

const fixedTime = '2026-01-01T00:00:00Z';
const entryPath = 'engineering/billing/invoice_retry_policy.md';
const cli = new URL('../../../bin/arbor', import.meta.url).pathname;
const skipWithoutCLI = skipWithoutWasm || (fs.existsSync(cli) ? false : 'bin/arbor is missing: run ./build.sh');

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

// The Go CLI and a Node memory describe a file alike (size, both times to
// the millisecond, inode): a tree one of them opened last is not read
// again by the other.
test('a memory opened by the arbor CLI last reads none of its files in Node', { skip: skipWithoutCLI }, async (t) => {
  const dir = tmpdir(t);
  let mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  await mem.curate([invoiceOp]);
  await mem.close();
  // The catalog trusts only times clearly older than the open.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  execFileSync(cli, ['--root', dir, 'search', 'invoice'], { stdio: 'ignore' });
  const base = nodeFs(dir);
  const reads = [];
  const storage = { ...base, read: (/** @type {string} */ p) => (p.endsWith('.md') && !p.startsWith('.arbor/') && reads.push(p), base.read(p)) };
  mem = await openMemory({ storage, fixedTime });
  defer(t, () => mem.close());
  assert.ok(mem.opened.entries >= 1);
  assert.deepEqual(reads, []);
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
