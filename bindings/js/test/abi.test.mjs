// The arbor_host imports over the memory store, driven the way the guest
// drives them: pointers into a WebAssembly.Memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArborHost, codes } from '../abi.js';
import { memory } from '../storage/memory.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A host over `store` plus helpers that place arguments in guest memory. */
function setup(store = memory(), onLog) {
  const mem = new WebAssembly.Memory({ initial: 2, maximum: 100 });
  const host = new ArborHost({ storage: store, onLog });
  host.bind({ exports: { memory: mem } });
  let next = 16;
  /** Copies bytes into fresh guest memory: [ptr, len]. */
  const put = (x) => {
    const b = typeof x === 'string' ? enc.encode(x) : x;
    const ptr = next;
    new Uint8Array(mem.buffer, ptr, b.length).set(b);
    next += b.length + 8;
    return [ptr, b.length];
  };
  const buf = (n) => {
    const ptr = next;
    next += n + 8;
    return ptr;
  };
  const text = (ptr, n) => dec.decode(new Uint8Array(mem.buffer, ptr, n));
  return { host, store, mem, f: host.imports, put, buf, text };
}

test('fs_read: the size protocol', () => {
  const content = 'x'.repeat(100);
  const { f, put, buf, text, mem } = setup(memory({ 'a/b.md': content }));
  const small = buf(10);
  new Uint8Array(mem.buffer, small, 10).fill(7);
  assert.equal(f.fs_read(...put('a/b.md'), small, 10), 100);
  assert.deepEqual([...new Uint8Array(mem.buffer, small, 10)], Array(10).fill(7), 'copied into a small buffer');
  const big = buf(100);
  assert.equal(f.fs_read(...put('a/b.md'), big, 100), 100);
  assert.equal(text(big, 100), content);
  const empty = setup(memory({ 'e.md': '' }));
  assert.equal(empty.f.fs_read(...empty.put('e.md'), 0, 0), 0);
});

test('fs_read: missing → -1, folder → -3', () => {
  const { f, put, buf } = setup(memory({ 'a/b.md': 'x' }));
  assert.equal(f.fs_read(...put('a/c.md'), buf(10), 10), codes.NOT_FOUND);
  assert.equal(f.fs_read(...put('a'), buf(10), 10), codes.INVALID);
});

test('fs_read_at: part of a file, from the storage\'s readAt or a slice of read', () => {
  const store = memory({ 'a/b.md': '0123456789' });
  const { read, write, remove, rename, list, stat } = store;
  for (const storage of [store, { read, write, remove, rename, list, stat }]) {
    const { f, put, buf, text } = setup(storage);
    const at = buf(8);
    for (const [off, len, want] of [[3, 4, '3456'], [8, 4, '89'], [10, 4, ''], [20, 4, ''], [0, 0, '']]) {
      assert.equal(f.fs_read_at(...put('a/b.md'), BigInt(off), at, len), want.length, `at ${off}`);
      assert.equal(text(at, want.length), want);
    }
    assert.equal(f.fs_read_at(...put('a/b.md'), -1n, at, 4), codes.INVALID);
    assert.equal(f.fs_read_at(...put('a/c.md'), 0n, at, 4), codes.NOT_FOUND);
    assert.equal(f.fs_read_at(...put('a'), 0n, at, 4), codes.INVALID);
    assert.equal(f.fs_read_at(...put('a/b.md'), 0n, 2 * 65536 - 2, 4), codes.INVALID, 'a buffer past the end of memory');
  }
});

test('bad paths are refused with -3 before the storage sees them', () => {
  const seen = [];
  const spy = memory();
  const store = new Proxy(spy, { get: (t, k) => (...a) => (seen.push(k), t[k](...a)) });
  const { f, put, buf } = setup(store);
  const bad = ['../x.md', '/etc/passwd', 'a//b.md', 'a/', 'a\\b.md', 'a/./b.md', 'a/../b.md', '.', '..',
    '.git/config', 'a/.hidden.md', 'a/.arbor/x', '.arbor2/x', '.arbor2/.gitignore', '.arbor/../.git/config', 'a\u0000b', 'tab\there', 'del\u007f'];
  for (const p of bad) {
    assert.equal(f.fs_read(...put(p), buf(8), 8), codes.INVALID, `read ${JSON.stringify(p)}`);
    assert.equal(f.fs_write(...put(p), ...put('x')), codes.INVALID, `write ${JSON.stringify(p)}`);
    assert.equal(f.fs_list(...put(p), buf(8), 8), codes.INVALID, `list ${JSON.stringify(p)}`);
    assert.equal(f.fs_stat(...put(p), buf(8), 8), codes.INVALID, `stat ${JSON.stringify(p)}`);
    assert.equal(f.fs_remove(...put(p)), codes.INVALID, `remove ${JSON.stringify(p)}`);
    assert.equal(f.fs_rename(...put(p), ...put('ok.md')), codes.INVALID, `rename from ${JSON.stringify(p)}`);
    assert.equal(f.fs_rename(...put('ok.md'), ...put(p)), codes.INVALID, `rename to ${JSON.stringify(p)}`);
  }
  // Not UTF-8.
  assert.equal(f.fs_read(...put(Uint8Array.of(0x61, 0xff, 0x62)), buf(8), 8), codes.INVALID);
  assert.deepEqual(seen, []);
});

test('a leading .arbor is the one dot-folder allowed, and anything may be named below it', () => {
  const { f, put, buf, text, store } = setup();
  assert.equal(f.fs_write(...put('.arbor/state.json'), ...put('{"v":1}')), 0);
  const b = buf(64);
  assert.equal(f.fs_read(...put('.arbor/state.json'), b, 64), 7);
  assert.equal(text(b, 7), '{"v":1}');
  assert.equal(f.fs_write(...put('.arbor/index/000000000001.seg'), ...put('seg')), 0);
  assert.equal(f.fs_write(...put('.arbor/.gitignore'), ...put('*')), 0);
  assert.deepEqual(Object.keys(store.snapshot()), ['.arbor/.gitignore', '.arbor/index/000000000001.seg', '.arbor/state.json']);
});

test('fs_list and fs_stat: JSON, sorted by code point, same size protocol', () => {
  const { f, put, buf, text } = setup(memory({ 'd/b.md': 'bb', 'd/a.md': 'a', 'd/sub/x.md': 'x', 'd/\u{1F600}.md': '', 'd/\uFFFD.md': '' }));
  const need = f.fs_list(...put('d'), buf(4), 4);
  assert.ok(need > 4);
  const b = buf(need);
  assert.equal(f.fs_list(...put('d'), b, need), need);
  const list = JSON.parse(text(b, need));
  assert.deepEqual(list.map((e) => e.name), ['a.md', 'b.md', 'sub', '\uFFFD.md', '\u{1F600}.md']);
  assert.deepEqual(Object.keys(list[0]), ['name', 'dir', 'size', 'mtime']);
  assert.equal(list[1].size, 2);
  assert.equal(list[2].dir, true);
  assert.equal(list[2].size, 0);
  const root = buf(256);
  const n = f.fs_list(...put(''), root, 256);
  assert.deepEqual(JSON.parse(text(root, n)).map((e) => e.name), ['d']);
  const s = buf(256);
  const m = f.fs_stat(...put('d/b.md'), s, 256);
  assert.deepEqual({ ...JSON.parse(text(s, m)), mtime: 0 }, { name: 'b.md', dir: false, size: 2, mtime: 0 });
  assert.equal(f.fs_stat(...put('d/zz.md'), s, 256), codes.NOT_FOUND);
  assert.equal(f.fs_list(...put('d/a.md'), s, 256), codes.INVALID);
});

test('fs_write, fs_rename, fs_remove', () => {
  const { f, put, store } = setup();
  assert.equal(f.fs_write(...put('x/y/z.md'), ...put('one')), 0);
  assert.equal(f.fs_write(...put('empty.md'), 0, 0), 0);
  assert.equal(f.fs_rename(...put('x/y/z.md'), ...put('q/r.md')), 0);
  assert.deepEqual(store.snapshot(), { 'empty.md': '', 'q/r.md': 'one' });
  assert.equal(f.fs_remove(...put('x')), codes.INVALID, 'x still holds the empty folder y');
  assert.equal(f.fs_remove(...put('x/y')), 0);
  assert.equal(f.fs_remove(...put('x')), 0);
  assert.equal(f.fs_remove(...put('x')), codes.NOT_FOUND);
  assert.equal(f.fs_remove(...put('q')), codes.INVALID, 'not empty');
  assert.equal(f.fs_rename(...put('nope.md'), ...put('q/s.md')), codes.NOT_FOUND);
  assert.equal(f.fs_write(...put('q/r.md/inner.md'), ...put('x')), codes.INVALID, 'a file in the way');
  assert.equal(f.fs_remove(...put('')), codes.INVALID, 'never the root');
});

test('fs_append: the storage append, or read and write back; fs_lock and fs_unlock', () => {
  const { f, put, store } = setup();
  assert.equal(f.fs_append(...put('.arbor/audit.jsonl'), ...put('one\n')), 0);
  assert.equal(f.fs_append(...put('.arbor/audit.jsonl'), ...put('two\n')), 0);
  assert.equal(store.snapshot()['.arbor/audit.jsonl'], 'one\ntwo\n');
  assert.equal(f.fs_append(...put('../x.log'), ...put('x')), codes.INVALID);
  const appended = [];
  const withAppend = { ...memory(), append: (p, b) => appended.push([p, dec.decode(b)]) };
  const other = setup(withAppend);
  assert.equal(other.f.fs_append(...other.put('a.log'), ...other.put('line')), 0);
  assert.deepEqual(appended, [['a.log', 'line']]);
  // A storage no other process writes has no lock: 0 at once.
  assert.equal(f.fs_lock(), 0);
  assert.equal(f.fs_unlock(), 0);
  const calls = [];
  const busy = setup({ ...memory(), lock: () => { calls.push('lock'); throw Object.assign(new Error('held'), { code: 'EBUSY' }); }, unlock: () => calls.push('unlock') });
  assert.equal(busy.f.fs_lock(), codes.BUSY);
  assert.equal(busy.f.fs_unlock(), 0);
  assert.deepEqual(calls, ['lock', 'unlock']);
});

test('fs_swap: writes only over what the caller read', () => {
  const { f, put, store } = setup();
  assert.equal(f.fs_swap(...put('a.md'), ...put('one'), 0, 0, 0), 0);
  assert.equal(f.fs_swap(...put('a.md'), ...put('two'), 0, 0, 0), codes.CHANGED, 'it exists now');
  assert.equal(f.fs_swap(...put('a.md'), ...put('two'), ...put('nope'), 1), codes.CHANGED);
  assert.equal(f.fs_swap(...put('a.md'), ...put('two'), ...put('one'), 1), 0);
  assert.equal(store.snapshot()['a.md'], 'two');
  assert.equal(f.fs_swap(...put('b.md'), ...put('x'), ...put('x'), 1), codes.CHANGED, 'absent');
});

test('storage errors map to codes; unknown failures are -4 and logged', () => {
  const logs = [];
  const failing = {
    read() { throw Object.assign(new Error('nope'), { code: 'EACCES' }); },
    write() { throw new Error('disk full'); },
    remove() { throw Object.assign(new Error('x'), { code: 'EIO' }); },
    rename() { throw 'a string'; },
    list() { throw Object.assign(new Error('x'), { code: 'ENOENT' }); },
    stat() { throw Object.assign(new Error('x'), { code: 'EINVAL' }); },
  };
  const { f, put, buf } = setup(failing, (level, msg) => logs.push([level, msg]));
  assert.equal(f.fs_read(...put('a.md'), buf(8), 8), codes.DENIED);
  assert.equal(f.fs_write(...put('a.md'), ...put('x')), codes.IO);
  assert.equal(f.fs_remove(...put('a.md')), codes.IO);
  assert.equal(f.fs_rename(...put('a.md'), ...put('b.md')), codes.IO);
  assert.equal(f.fs_list(...put('a'), buf(8), 8), codes.NOT_FOUND);
  assert.equal(f.fs_stat(...put('a'), buf(8), 8), codes.INVALID);
  assert.equal(logs.length, 3);
  assert.match(logs[0][1], /write: disk full/);
});

test('a full disk or quota (ENOSPC, EDQUOT) is -8, NO_SPACE, logged once until a write goes through', () => {
  const logs = [];
  const full = (code) => () => {
    throw Object.assign(new Error(`${code}: no space left on device`), { code });
  };
  const mem = memory();
  let room = false;
  const storage = {
    ...mem,
    write: (p, data) => (room ? mem.write(p, data) : full('ENOSPC')()),
    append: full('EDQUOT'),
    rename: full('ENOSPC'),
  };
  const { f, put } = setup(storage, (level, msg) => logs.push([level, msg]));
  assert.equal(codes.NO_SPACE, -8);
  assert.equal(f.fs_write(...put('a.md'), ...put('x')), codes.NO_SPACE);
  assert.equal(f.fs_append(...put('.arbor/audit.jsonl'), ...put('x')), codes.NO_SPACE);
  assert.equal(f.fs_rename(...put('a.md'), ...put('b.md')), codes.NO_SPACE);
  assert.deepEqual(logs.map(([level, msg]) => [level, /no space left on device/.test(msg)]), [['error', true]]);
  room = true;
  assert.equal(f.fs_write(...put('a.md'), ...put('x')), 0);
  room = false;
  assert.equal(f.fs_write(...put('b.md'), ...put('x')), codes.NO_SPACE);
  assert.equal(logs.length, 2, 'a disk full again after a write went through is said again');
});

test('a path past the system limit (ENAMETOOLONG) is -9, TOO_LONG', () => {
  const tooLong = () => {
    throw Object.assign(new Error('ENAMETOOLONG: name too long'), { code: 'ENAMETOOLONG' });
  };
  const { f, put, buf } = setup({ ...memory(), read: tooLong, write: tooLong });
  assert.equal(codes.TOO_LONG, -9);
  assert.equal(f.fs_read(...put('a.md'), buf(8), 8), codes.TOO_LONG);
  assert.equal(f.fs_write(...put('a.md'), ...put('x')), codes.TOO_LONG);
});

// A rename across a mount inside the root (EXDEV) has a code of its own:
// the engine's folder MOVE then copies what it would have renamed.
test('a rename across devices (EXDEV) is -10, CROSS_DEVICE', () => {
  const rename = () => {
    throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
  };
  const { f, put } = setup({ ...memory(), rename });
  assert.equal(codes.CROSS_DEVICE, -10);
  assert.equal(f.fs_rename(...put('a.md'), ...put('b/a.md')), codes.CROSS_DEVICE);
});

test('arguments outside guest memory are -3, not a trap', () => {
  const { f, put, mem } = setup();
  const end = mem.buffer.byteLength;
  assert.equal(f.fs_read(end - 2, 10, 0, 0), codes.INVALID);
  assert.equal(f.fs_write(...put('a.md'), end - 2, 10), codes.INVALID);
  assert.equal(f.fs_read(...put('a.md'), end - 2, 10), codes.NOT_FOUND);
});

test('views are re-made after memory grows', () => {
  const { f, put, mem, store } = setup(memory({ 'a.md': 'hello' }));
  const [pp, pl] = put('a.md');
  const old = mem.buffer;
  mem.grow(3);
  assert.notEqual(mem.buffer, old);
  assert.equal(old.byteLength, 0, 'the old buffer is detached');
  const far = 4 * 65536 + 100; // in the new pages
  assert.equal(f.fs_read(pp, pl, far, 16), 5);
  assert.equal(dec.decode(new Uint8Array(mem.buffer, far, 5)), 'hello');
  new Uint8Array(mem.buffer, far, 3).set(enc.encode('new'));
  assert.equal(f.fs_write(pp, pl, far, 3), 0);
  assert.equal(store.snapshot()['a.md'], 'new');
});

test('a retry after "too small" is served without reading again', () => {
  let reads = 0;
  const inner = memory({ 'a.md': 'y'.repeat(50) });
  const store = { ...inner, read: (p) => (reads++, inner.read(p)) };
  const { f, put, buf, text } = setup(store);
  assert.equal(f.fs_read(...put('a.md'), buf(4), 4), 50);
  const b = buf(50);
  assert.equal(f.fs_read(...put('a.md'), b, 50), 50);
  assert.equal(text(b, 50), 'y'.repeat(50));
  assert.equal(reads, 1);
  // Any other call in between drops the saved answer.
  assert.equal(f.fs_read(...put('a.md'), buf(4), 4), 50);
  assert.equal(f.fs_write(...put('a.md'), ...put('zz')), 0);
  assert.equal(f.fs_read(...put('a.md'), buf(50), 50), 2);
});

test('log: levels by name, bad input ignored', () => {
  const logs = [];
  const { f, put } = setup(memory(), (level, msg) => logs.push([level, msg]));
  f.log(0, ...put('d'));
  f.log(1, ...put('i'));
  f.log(2, ...put('w'));
  f.log(3, ...put('e'));
  f.log(9, ...put('?'));
  f.log(3, 1e9, 5);
  assert.deepEqual(logs, [['debug', 'd'], ['info', 'i'], ['warn', 'w'], ['error', 'e'], ['info', '?']]);
});

test('pointers past 2 GiB, which WebAssembly hands JavaScript as negative i32s', () => {
  // Pages past 2 GiB, as a million-entry tree's memory grew to; those
  // never touched cost nothing.
  const mem = new WebAssembly.Memory({ initial: 2 ** 15 + 1 });
  const host = new ArborHost({ storage: memory({ 'a/b.md': 'hello' }) });
  host.bind({ exports: { memory: mem } });
  const high = 2 ** 31 + 64;
  const put = (s, at) => {
    const b = enc.encode(s);
    new Uint8Array(mem.buffer, at, b.length).set(b);
    return [at | 0, b.length];
  };
  const buf = high + 1024;
  assert.equal(host.imports.fs_read(...put('a/b.md', high), buf | 0, 64), 5);
  assert.equal(dec.decode(new Uint8Array(mem.buffer, buf, 5)), 'hello');
  const n = host.imports.fs_list(...put('a', high), buf | 0, 4096);
  assert.ok(n > 0, `fs_list: ${n}`);
  assert.equal(JSON.parse(dec.decode(new Uint8Array(mem.buffer, buf, n)))[0].name, 'b.md');
  assert.equal(host.imports.fs_write(...put('a/c.md', high), ...put('bye', high + 512)), 0);
  assert.equal(host.imports.fs_read(...put('a/c.md', high), buf | 0, 64), 3);
});
