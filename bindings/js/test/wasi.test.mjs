// The WASI shim on its own, against a bare memory: no Go module needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WASI, WASIExit, errno } from '../wasi.js';

function setup(options) {
  const memory = new WebAssembly.Memory({ initial: 4 });
  const wasi = new WASI(options);
  wasi.bind({ exports: { memory } });
  return { wasi, memory, fns: wasi.imports(), view: () => new DataView(memory.buffer) };
}

test('clock_time_get: realtime near Date.now, monotonic non-decreasing, in nanoseconds', () => {
  const { fns, view } = setup();
  assert.equal(fns.clock_time_get(0, 1000n, 64), errno.SUCCESS);
  const real = view().getBigUint64(64, true);
  const diff = Number(real / 1_000_000n) - Date.now();
  assert.ok(Math.abs(diff) < 1000, `realtime off by ${diff} ms`);
  assert.equal(fns.clock_time_get(1, 0n, 64), errno.SUCCESS);
  const m1 = view().getBigUint64(64, true);
  assert.equal(fns.clock_time_get(1, 0n, 64), errno.SUCCESS);
  const m2 = view().getBigUint64(64, true);
  assert.ok(m2 >= m1);
  assert.equal(fns.clock_time_get(7, 0n, 64), errno.INVAL);
  assert.equal(fns.clock_res_get(1, 64), errno.SUCCESS);
  assert.ok(view().getBigUint64(64, true) > 0n);
});

test('random_get fills more than one 64 KiB chunk', () => {
  const { fns, memory } = setup();
  const len = 3 * 65536 + 100;
  assert.equal(fns.random_get(1024, len), errno.SUCCESS);
  const bytes = new Uint8Array(memory.buffer, 1024, len);
  for (let at = 0; at < len; at += 65536) {
    const chunk = bytes.subarray(at, Math.min(len, at + 65536));
    assert.ok(chunk.some((b) => b !== 0), `chunk at ${at} is all zeros`);
  }
  assert.equal(new Uint8Array(memory.buffer)[1024 + len], 0, 'wrote past the end');
});

test('fd_write: line-buffered per descriptor, UTF-8 split across writes, flush', () => {
  const lines = [];
  const { wasi, fns, memory, view } = setup({ onOutput: (fd, line) => lines.push([fd, line]) });
  const write = (fd, bytes) => {
    new Uint8Array(memory.buffer, 2048, bytes.length).set(bytes);
    view().setUint32(1024, 2048, true); // one iovec
    view().setUint32(1028, bytes.length, true);
    const rc = fns.fd_write(fd, 1024, 1, 1100);
    if (rc === 0) assert.equal(view().getUint32(1100, true), bytes.length);
    return rc;
  };
  const e = new TextEncoder();
  const euro = e.encode('€'); // 3 bytes
  assert.equal(write(2, e.encode('panic: ')), 0);
  assert.equal(write(2, euro.subarray(0, 1)), 0);
  assert.equal(write(2, Uint8Array.of(...euro.subarray(1), 10, ...e.encode('second\nthi'))), 0);
  assert.equal(write(1, e.encode('out\n')), 0);
  assert.deepEqual(lines, [[2, 'panic: €'], [2, 'second'], [1, 'out']]);
  wasi.flush();
  assert.deepEqual(lines.at(-1), [2, 'thi']);
  assert.equal(write(3, e.encode('x')), errno.BADF);
});

test('fd_write gathers several iovecs', () => {
  const lines = [];
  const { fns, memory, view } = setup({ onOutput: (fd, line) => lines.push(line) });
  new Uint8Array(memory.buffer).set(new TextEncoder().encode('hello '), 3000);
  new Uint8Array(memory.buffer).set(new TextEncoder().encode('world\n'), 4000);
  view().setUint32(1024, 3000, true);
  view().setUint32(1028, 6, true);
  view().setUint32(1032, 4000, true);
  view().setUint32(1036, 6, true);
  assert.equal(fns.fd_write(2, 1024, 2, 1100), 0);
  assert.equal(view().getUint32(1100, true), 12);
  assert.deepEqual(lines, ['hello world']);
});

test('args and environ', () => {
  const { fns, memory, view } = setup({ args: ['arbor', 'x'], env: { A: '1' } });
  assert.equal(fns.args_sizes_get(0, 4), 0);
  assert.equal(view().getUint32(0, true), 2);
  assert.equal(view().getUint32(4, true), 'arbor\0x\0'.length);
  assert.equal(fns.args_get(16, 64), 0);
  const p = view().getUint32(20, true);
  assert.equal(new TextDecoder().decode(new Uint8Array(memory.buffer, p, 2)), 'x\0');
  assert.equal(fns.environ_sizes_get(0, 4), 0);
  assert.equal(view().getUint32(0, true), 1);
  assert.equal(fns.environ_get(16, 64), 0);
  assert.equal(new TextDecoder().decode(new Uint8Array(memory.buffer, 64, 4)), 'A=1\0');
});

test('no preopens, stdio is a character device', () => {
  const { fns, view } = setup();
  assert.equal(fns.fd_prestat_get(3, 0), errno.BADF);
  assert.equal(fns.fd_fdstat_get(3, 0), errno.BADF);
  assert.equal(fns.fd_fdstat_get(2, 0), errno.SUCCESS);
  assert.equal(view().getUint8(0), 2);
  assert.equal(fns.fd_close(5), errno.BADF);
});

test('poll_oneoff sleeps by moving the monotonic clock, not by waiting', () => {
  const { fns, view } = setup();
  const now = () => {
    fns.clock_time_get(1, 0n, 8);
    return view().getBigUint64(8, true);
  };
  const before = now();
  // One relative clock subscription of 5 s.
  const sub = 256;
  view().setBigUint64(sub, 42n, true); // userdata
  view().setUint8(sub + 8, 0); // clock
  view().setUint32(sub + 16, 1, true); // monotonic
  view().setBigUint64(sub + 24, 5_000_000_000n, true);
  view().setUint16(sub + 40, 0, true);
  const started = performance.now();
  assert.equal(fns.poll_oneoff(sub, 512, 1, 600), errno.SUCCESS);
  assert.ok(performance.now() - started < 1000, 'poll_oneoff blocked');
  assert.equal(view().getUint32(600, true), 1);
  assert.equal(view().getBigUint64(512, true), 42n);
  assert.equal(view().getUint16(512 + 8, true), 0);
  assert.ok(now() - before >= 5_000_000_000n);
});

test('proc_exit throws WASIExit carrying the code', () => {
  const { fns } = setup();
  assert.throws(() => fns.proc_exit(3), (err) => err instanceof WASIExit && err.code === 3);
});

test('imports() stubs every WASI function the module imports but the shim lacks', async () => {
  // (module (import "wasi_snapshot_preview1" "path_open" (func (result i32))) (export "f" (func 0)))
  const name = new TextEncoder().encode('wasi_snapshot_preview1');
  const fn = new TextEncoder().encode('path_open');
  const imports = [1, name.length, ...name, fn.length, ...fn, 0, 0];
  const bytes = Uint8Array.of(
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    1, 5, 1, 0x60, 0, 1, 0x7f,
    2, imports.length, ...imports,
    7, 5, 1, 1, 0x66, 0, 0,
  );
  const module = await WebAssembly.compile(bytes);
  const wasi = new WASI();
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.imports(module) });
  assert.equal(instance.exports.f(), errno.NOSYS);
});

test('pointers past 2 GiB, which WebAssembly hands JavaScript as negative i32s', () => {
  // Pages past 2 GiB; those never touched cost nothing.
  const memory = new WebAssembly.Memory({ initial: 2 ** 15 + 1 });
  const wasi = new WASI();
  wasi.bind({ exports: { memory } });
  const fns = wasi.imports();
  const at = 2 ** 31 + 64;
  assert.equal(fns.clock_time_get(1, 0n, at | 0), errno.SUCCESS);
  assert.ok(new DataView(memory.buffer).getBigUint64(at, true) > 0n);
  assert.equal(fns.random_get(at | 0, 32), errno.SUCCESS);
  assert.ok(new Uint8Array(memory.buffer, at, 32).some((b) => b !== 0));
});
