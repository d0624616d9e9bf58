// The published package, as a user gets it: `npm pack` lists exactly what
// a user needs (the wasm included, no tests or sources), and the tarball
// installed in an empty project opens a memory, curates and answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const wasm = path.join(root, 'dist', 'arbor.wasm');
const skip = fs.existsSync(wasm) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

test('npm pack ships the package and the engine, installable offline in an empty project', { skip }, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-pack-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // prepack rebuilds the wasm (./build.sh wasm); the suite has just built it.
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }));
  const files = pack.files.map((f) => f.path).sort();
  for (const want of ['LICENSE', 'README.md', 'package.json', 'dist/arbor.wasm', 'bindings/js/index.js', 'bindings/js/index.node.js', 'bindings/js/index.d.ts', 'bindings/js/worker-entry.js', 'bindings/js/storage/node.js', 'bindings/js/llm/index.js', 'bindings/js/sync/index.js', 'bindings/js/sync/node.js', 'bindings/js/sync/core.js', 'bindings/js/sync/index.d.ts']) {
    assert.ok(files.includes(want), `${want} is not in the tarball`);
  }
  const stray = files.filter((f) => !['LICENSE', 'README.md', 'package.json', 'dist/arbor.wasm'].includes(f) && !/^bindings\/js\/.+\.(js|d\.ts|md)$/.test(f));
  assert.deepEqual(stray, [], 'files a user does not need');
  assert.ok(!files.some((f) => f.startsWith('bindings/js/test/')), 'tests shipped');
  const wasmEntry = pack.files.find((f) => f.path === 'dist/arbor.wasm');
  assert.equal(wasmEntry.size, fs.statSync(wasm).size);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.private, undefined);
  assert.equal(pkg.license, 'Apache-2.0');

  const app = path.join(dir, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // No runtime dependencies: the install needs no registry. isomorphic-git
  // is an optional peer dependency, for arbor-memory/sync only: not installed.
  execFileSync('npm', ['install', path.join(dir, pack.filename), '--offline', '--no-audit', '--no-fund'], { cwd: app, stdio: 'pipe' });
  fs.writeFileSync(path.join(app, 'use.mjs'), `
import { openMemory, nodeFs } from 'arbor-memory';
import { memory } from 'arbor-memory/memory';
const mem = await openMemory({ storage: nodeFs('./notes') });
const res = await mem.curate({ type: 'ADD', path: 'engineering/billing', title: 'Invoice retry policy',
  content: 'Failed invoices are retried three times, then escalated.', reason: 'billing sync' });
const q = await mem.query('how often are failed invoices retried?');
await mem.close();
const other = await openMemory({ storage: memory() });
await other.close();
const sync = await import('arbor-memory/sync').then(() => 'loaded', (err) => err.code);
console.log(JSON.stringify({ status: res.applied[0].status, tier: q.tierName, top: q.results[0]?.path, sync }));
`);
  const out = JSON.parse(execFileSync('node', ['use.mjs'], { cwd: app, encoding: 'utf8' }));
  // The memory ran without isomorphic-git; only the sync entry needs it.
  assert.deepEqual(out, { status: 'success', tier: 'direct', top: 'engineering/billing/invoice_retry_policy.md', sync: 'ERR_MODULE_NOT_FOUND' });
  assert.ok(!fs.existsSync(path.join(app, 'node_modules', 'isomorphic-git')), 'isomorphic-git was installed');
  assert.ok(fs.existsSync(path.join(app, 'notes', 'engineering', 'billing', 'invoice_retry_policy.md')));
});
