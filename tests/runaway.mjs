import { ABI_VERSION } from '../bindings/js/index.js';

// A module with the exports of docs/ABI.md §1 whose arbor_call answers its
// first request (the open) and never returns from the next, nor calls the
// host meanwhile: the one call a deadline must stop, for the tests of the
// sandbox limits (docs/sandbox.md) in Node and in Chromium.
//
//   (memory (export "memory") 1)
//   (global $calls (mut i32) (i32.const 0))
//   (data (i32.const 2048) "{\"id\":1,\"result\":{…}}")
//   (func (export "_initialize"))
//   (func (export "arbor_abi_version") (result i32) (i32.const <ABI_VERSION>))
//   (func (export "arbor_alloc") (param i32) (result i32) (i32.const 1024))
//   (func (export "arbor_free") (param i32))
//   (func (export "arbor_call") (param i32 i32) (result i64)
//     (if (i32.eqz (global.get $calls))
//       (then (global.set $calls (i32.const 1)) (return (i64.const <2048 << 32 | length>))))
//     (loop (br 0))
//     unreachable)
//
// With `lock`, the never-ending call first takes the root's lock, as a
// write does (it imports arbor_host's fs_lock, function 0, and calls it);
// with `trap`, it then traps instead of looping, as a crash would.
export function runaway({ lock = false, trap = false } = {}) {
  const abiVersion = ABI_VERSION;
  const imported = lock ? 1 : 0;
  const answer = new TextEncoder().encode('{"id":1,"result":{"entries":0,"contexts":0,"warnings":[],"index":{"reused":0,"indexed":0,"removed":0}}}');
  const uleb = (n) => {
    const out = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return out;
  };
  const sleb64 = (v) => {
    const out = [];
    for (;;) {
      const b = Number(v & 0x7fn);
      v >>= 7n;
      if ((v === 0n && !(b & 0x40)) || (v === -1n && b & 0x40)) return [...out, b];
      out.push(b | 0x80);
    }
  };
  const name = (s) => [...uleb(s.length), ...new TextEncoder().encode(s)];
  const section = (id, body) => [id, ...uleb(body.length), ...body];
  const i32 = 0x7f;
  const i64 = 0x7e;
  const types = [5, 0x60, 0, 0, 0x60, 0, 1, i32, 0x60, 1, i32, 1, i32, 0x60, 1, i32, 0, 0x60, 2, i32, i32, 1, i64];
  const exportNames = ['_initialize', 'arbor_abi_version', 'arbor_alloc', 'arbor_free', 'arbor_call'];
  const exports = [6, ...name('memory'), 2, 0, ...exportNames.flatMap((n, i) => [...name(n), 0, imported + i])];
  const packed = (2048n << 32n) | BigInt(answer.length);
  const call = [
    0x00, // no locals
    0x23, 0, 0x45, 0x04, 0x40, // if (calls == 0)
    0x41, 1, 0x24, 0, // calls = 1
    0x42, ...sleb64(packed), 0x0f, // return the answer
    0x0b,
    ...(lock ? [0x10, 0, 0x1a] : []), // drop(fs_lock())
    ...(trap ? [] : [0x03, 0x40, 0x0c, 0, 0x0b]), // loop forever
    0x00, 0x0b,
  ];
  const bodies = [[0x00, 0x0b], [0x00, 0x41, abiVersion, 0x0b], [0x00, 0x41, 0x80, 0x08, 0x0b], [0x00, 0x0b], call];
  const code = [bodies.length, ...bodies.flatMap((b) => [...uleb(b.length), ...b])];
  const data = [1, 0, 0x41, 0x80, 0x10, 0x0b, ...uleb(answer.length), ...answer];
  return new Uint8Array([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, types),
    ...(lock ? section(2, [1, ...name('arbor_host'), ...name('fs_lock'), 0x00, 1]) : []),
    ...section(3, [5, 0, 1, 2, 3, 4]),
    ...section(5, [1, 0, 1]),
    ...section(6, [1, i32, 1, 0x41, 0, 0x0b]),
    ...section(7, exports),
    ...section(10, code),
    ...section(11, data),
  ]);
}
