// The sandbox limits of docs/sandbox.md in Node: the read-only grant, the
// memory cap written into the module, and the deadline of a memory in a
// worker (worker_threads), which ends the worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openMemory, startEngine, compileArbor, memory, nodeFs, ArborError } from 'arbor-memory';
import { openMemoryInWorker } from 'arbor-memory/worker';
import { ArborHost, codes } from '../abi.js';
import { capMemory } from '../sandbox.js';
import { skipWithoutWasm, tmpdir, invoiceOp, wasmURL, defer } from './_engine.mjs';
import { runaway } from '../../../tests/runaway.mjs';

const fixedTime = '2026-01-01T00:00:00Z';
const note = '---\ntitle: Zebra crossing\n---\n\n## Narrative\nThe zebra crossing on Elm street got new paint.\n';

/** Every file under dir, `.arbor/` included, with its content and time. */
function everything(dir) {
  const out = {};
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    const p = path.join(dir, rel);
    const st = fs.statSync(p);
    out[rel] = st.isDirectory() ? `dir ${st.mtimeMs}` : `${st.mtimeMs} ${fs.readFileSync(p, 'utf8')}`;
  }
  return out;
}

async function rejects(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof ArborError, `not an ArborError: ${err}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

/**
 * n operations and a last one with a misspelt key, which refuses the whole
 * call once they are all decoded: seconds of work and much memory that
 * write nothing (docs/ABI.md §4.2).
 */
function heavyCurate(n) {
  const ops = Array.from({ length: n }, (_, i) => ({ type: 'ADD', path: 'notes/misc', title: `Note ${i}`, content: 'text', reason: 'test' }));
  return [...ops, { type: 'ADD', path: 'notes/misc', title: 'Typo', contnet: 'text', reason: 'test' }];
}

// A scripted model that must never be called.
const noModel = { complete: () => assert.fail('the model was called') };

test('a read-only memory answers every read and writes nothing', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  // A root used before: index, signals and audit log on disk.
  let mem = await openMemory({ storage: nodeFs(dir), fixedTime });
  await mem.curate([invoiceOp]);
  await mem.read('engineering/billing/invoice_retry_policy.md');
  await mem.close();
  const before = everything(dir);
  const warnings = [];
  mem = await openMemory({ storage: nodeFs(dir), fixedTime, readOnly: true, onLog: (level, m) => level !== 'info' && level !== 'debug' && warnings.push(m) });
  const q = await mem.query('how often are failed invoices retried?');
  assert.equal(q.results[0].path, 'engineering/billing/invoice_retry_policy.md');
  assert.equal((await mem.search('invoice')).total, 1);
  await mem.read('engineering/billing/invoice_retry_policy.md');
  await mem.tree();
  await mem.stats();
  await rejects(mem.curate([{ ...invoiceOp, title: 'Another' }]), 'read_only');
  await rejects(mem.ingest([{ name: 'notes.md', content: '# Notes\n\ntext\n' }]), 'read_only');
  await rejects(mem.curateFrom([{ name: 'n.txt', content: 'Refunds need two approvals.' }], { llm: noModel }), 'read_only');
  await rejects(mem.importFiles([{ path: 'notes/misc/zebra.md', data: note }]), 'read_only');
  assert.equal((await mem.flush()).written, false);
  await mem.close();
  assert.deepEqual(everything(dir), before);
  assert.deepEqual(warnings, [], 'the engine tried to write');
});

test('the host refuses writes under the grant, whatever the module asks', async () => {
  const store = memory({ 'x.md': 'kept' });
  const lines = [];
  const host = new ArborHost({ storage: store, readOnly: true, onLog: (level, m) => lines.push(`${level} ${m}`) });
  host.memory = new WebAssembly.Memory({ initial: 1 });
  new Uint8Array(host.memory.buffer).set(new TextEncoder().encode('x.md'), 0);
  let locked = 0;
  store.lock = () => locked++;
  assert.equal(host.imports.fs_write(0, 4, 0, 4), codes.DENIED);
  assert.equal(host.imports.fs_append(0, 4, 0, 4), codes.DENIED);
  assert.equal(host.imports.fs_remove(0, 4), codes.DENIED);
  assert.equal(host.imports.fs_rename(0, 4, 0, 4), codes.DENIED);
  assert.equal(host.imports.fs_lock(), 0);
  assert.equal(locked, 0, 'the lock, a file, was taken');
  assert.deepEqual(store.snapshot(), { 'x.md': 'kept' });
  assert.deepEqual(lines, ['fs_write', 'fs_append', 'fs_remove', 'fs_rename'].map((name) => `warn ${name}: refused: the memory is granted read-only`));
});

test('a raw engine under the grant opens read-only even when asked otherwise', { skip: skipWithoutWasm }, async () => {
  const store = memory({ 'notes/misc/zebra_crossing.md': note });
  const engine = await startEngine({ storage: store, readOnly: true });
  const opened = JSON.parse(await engine.request(`{"id":1,"method":"open","params":{"fixedTime":"${fixedTime}","ReadOnly":false}}`));
  assert.ok(opened.result, JSON.stringify(opened));
  const curated = JSON.parse(await engine.request(JSON.stringify({ id: 2, method: 'curate', params: { operations: [invoiceOp] } })));
  assert.equal(curated.error?.code, 'read_only');
  await engine.request('{"id":3,"method":"close"}');
  await engine.dispose();
  assert.deepEqual(Object.keys(store.snapshot()), ['notes/misc/zebra_crossing.md']);
});

test('the memory cap is written into the module', async (t) => {
  // (module (memory (export "memory") 2))
  const mod = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 3, 1, 0x00, 2, 7, 10, 1, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 0]);
  const capped = capMemory(mod, 3);
  const { instance: { exports } } = await WebAssembly.instantiate(capped);
  assert.equal(exports.memory.grow(1), 2);
  assert.throws(() => exports.memory.grow(1), RangeError, 'grew past the cap');
  assert.throws(() => capMemory(mod, 1), (err) => err.code === 'invalid_params' && /below the 0 MiB the module needs/.test(err.message));
  assert.throws(() => capMemory(mod.subarray(0, 8), 3), /defines no memory/);
  await rejects(compileArbor(await WebAssembly.compile(mod), { maxMemoryBytes: 1 << 20 }), 'invalid_params');
  await rejects(compileArbor(mod, { maxMemoryBytes: 100 }), 'invalid_params');
  if (!skipWithoutWasm) {
    await t.test('below what the engine needs to start', () => rejects(openMemory({ maxMemoryBytes: 1 << 20 }), 'invalid_params'));
  }
});

test('a call over the memory cap rejects with memory_limit and the memory reopens', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const output = [];
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime, maxMemoryBytes: 32 << 20, onOutput: (fd, line) => output.push(line) });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp]);
  const before = everything(dir);
  // Decoding 60,000 operations needs far more than 32 MiB (20,000 came to
  // fit once the module shrank and stopped building bluge's tables at start).
  await assert.rejects(mem.curate(heavyCurate(60000)), (err) => {
    assert.equal(err.code, 'memory_limit', err.message);
    assert.match(err.message, /its cap of 32 MiB \(maxMemoryBytes\); the memory reopens at the next call/);
    return true;
  });
  assert.deepEqual(everything(dir), before);
  assert.ok(output.some((line) => line.startsWith('fatal error:')), 'the Go runtime did not report it');
  const found = await mem.search('invoice retry');
  assert.deepEqual(found.results.map((r) => r.path), ['engineering/billing/invoice_retry_policy.md']);
});

test('a module that stops while it holds the root\'s lock leaves no lock behind', async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), wasm: runaway({ lock: true, trap: true }), onOutput: () => {} });
  defer(t, () => mem.close());
  for (const i of [1, 2]) {
    await assert.rejects(mem.stats(), (err) => {
      assert.equal(err.code, 'crashed', `call ${i}: ${err.message}`);
      assert.match(err.message, /the memory reopens at the next call$/);
      return true;
    });
    assert.ok(!fs.existsSync(path.join(dir, '.arbor/lock')), `call ${i}: the stopped call left the lock`);
  }
});

test('a call past its deadline ends the worker; a saved tree reopens in a new one', async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemoryInWorker({ storage: { kind: 'nodeFs', dir }, wasm: runaway(), callTimeoutMs: 50 });
  defer(t, () => mem.close());
  for (const i of [1, 2]) {
    await assert.rejects(mem.stats(), (err) => {
      assert.equal(err.code, 'deadline', `call ${i}: ${err.message}`);
      assert.match(err.message, /^stats: stopped after 50 ms \(callTimeoutMs\): the worker running the engine was ended; the memory reopens in a new worker/);
      return true;
    });
  }
});

test('the root\'s lock held by a worker ended at its deadline is released', async (t) => {
  const dir = tmpdir(t);
  const lockFile = path.join(dir, '.arbor/lock');
  const mem = await openMemoryInWorker({ storage: { kind: 'nodeFs', dir }, wasm: runaway({ lock: true }), callTimeoutMs: 50 });
  defer(t, () => mem.close());
  for (const i of [1, 2]) {
    await rejects(mem.stats(), 'deadline');
    assert.ok(!fs.existsSync(lockFile), `call ${i}: the lock of the ended worker is still there`);
  }
});

test('an in-memory tree is lost with its worker', async () => {
  const mem = await openMemoryInWorker({ wasm: runaway(), callTimeoutMs: 50 });
  await rejects(mem.stats(), 'deadline');
  await rejects(mem.search('x'), 'crashed');
  await mem.close();
});

test('the worker keeps what was saved before the deadline, and the options reach it', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const wasm = fs.readFileSync(wasmURL);
  const mem = await openMemoryInWorker({ storage: { kind: 'nodeFs', dir }, wasm, fixedTime, callTimeoutMs: 500 });
  defer(t, () => mem.close());
  await mem.curate([invoiceOp]);
  // Decoding 100,000 operations takes seconds.
  await rejects(mem.curate(heavyCurate(100000)), 'deadline');
  const found = await mem.search('invoice retry');
  assert.deepEqual(found.results.map((r) => r.path), ['engineering/billing/invoice_retry_policy.md']);
  const output = [];
  const ro = await openMemoryInWorker({ storage: { kind: 'nodeFs', dir }, wasm, readOnly: true, maxMemoryBytes: 32 << 20, onOutput: (fd, line) => output.push(line) });
  defer(t, () => ro.close());
  await rejects(ro.curate([{ ...invoiceOp, title: 'Another' }]), 'read_only');
  // A request of 40 MB does not even fit the module's memory.
  await rejects(ro.call('stats', { pad: 'x'.repeat(40 << 20) }), 'memory_limit');
  assert.ok(output.includes('fatal error: out of memory') || output.includes('fatal error: runtime: cannot allocate memory'), 'the output did not come through');
  assert.equal((await ro.search('invoice retry')).total, 1);
  await rejects(openMemory({ callTimeoutMs: 100 }), 'invalid_params');
  await rejects(openMemoryInWorker({ callTimeoutMs: 0 }), 'invalid_params');
});
