// fs_walk (docs/ABI.md §2) against the walk the engine made before it:
// fs_list folder by folder, driven the way the guest drives them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ArborHost, codes } from '../abi.js';
import { memory } from '../storage/memory.js';
import { nodeFs } from '../storage/node.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A host over `storage`, with guest memory to place arguments in. */
function setup(storage, onLog) {
  const mem = new WebAssembly.Memory({ initial: 4, maximum: 1000 });
  const host = new ArborHost({ storage, onLog });
  host.bind({ exports: { memory: mem } });
  const f = host.imports;
  /** Writes s at ptr: [ptr, len]. */
  const put = (ptr, s) => {
    const b = enc.encode(s);
    new Uint8Array(mem.buffer, ptr, b.length).set(b);
    return [ptr, b.length];
  };
  const list = (p) => {
    const n = f.fs_list(...put(16, p), 4096, 200000);
    assert.ok(n >= 0 && n <= 200000, `fs_list ${p}: ${n}`);
    return JSON.parse(dec.decode(new Uint8Array(mem.buffer, 4096, n)));
  };
  return { mem, f, put, list };
}

/** Decodes fs_walk's records. */
function decode(bytes) {
  let i = 0;
  const uvarint = () => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const c = bytes[i++];
      assert.ok(c !== undefined, 'a record is cut');
      v += (c & 0x7f) * mul;
      if (c < 0x80) return v;
      mul *= 0x80;
    }
  };
  const varint = () => {
    const z = uvarint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  };
  const str = () => {
    const n = uvarint();
    const s = dec.decode(bytes.subarray(i, i + n));
    i += n;
    return s;
  };
  const out = [];
  while (i < bytes.length) {
    const dir = str();
    const list = [];
    for (let k = uvarint(); k > 0; k--) {
      const name = str();
      const kind = bytes[i++];
      assert.ok(kind === 0 || kind === 1, `kind ${kind}`);
      const size = uvarint();
      const mtime = varint();
      const ctime = mtime + varint();
      const ino = uvarint();
      // As fs_list gives it: no ctime or ino where the storage has none.
      list.push({ name, dir: kind === 1, size, mtime, ...(ctime && { ctime }), ...(ino && { ino }) });
    }
    out.push({ dir, list });
  }
  return out;
}

/**
 * The whole walk of dir through fs_walk in buffers of `cap` bytes,
 * resumed as the guest does; `between(call)` runs before each call but the
 * first.
 */
function walk({ mem, f, put }, dir, cap, between) {
  const out = [];
  let after = '';
  let calls = 0;
  let grown = 0;
  for (;;) {
    if (calls > 0) between?.(calls);
    if (++calls > 100000) assert.fail('the walk does not end');
    const [pp, pl] = put(16, dir);
    const [ap, al] = after === '' ? [0, 0] : put(2048, after);
    const buf = 8192;
    if (mem.buffer.byteLength < buf + cap) mem.grow(Math.ceil((buf + cap - mem.buffer.byteLength) / 65536));
    const n = f.fs_walk(pp, pl, ap, al, buf, cap);
    assert.ok(n >= 0, `fs_walk ${dir} after ${after}: ${n}`);
    if (n === 0) return { out, calls, grown };
    if (n > cap) {
      cap = n;
      grown++;
      continue;
    }
    const recs = decode(new Uint8Array(mem.buffer, buf, n).slice());
    assert.ok(recs.length > 0);
    out.push(...recs);
    after = `${recs[recs.length - 1].dir}/`;
  }
}

/**
 * The walk by fs_list, folder by folder: dot-names left out, a folder the
 * storage identifies as one above it (a link back up the tree) listed but
 * not walked.
 */
function listWalk(h, storage, dir, above = []) {
  const id = storage.stat(dir).id;
  if (id !== undefined && above.includes(id)) return [];
  const list = h.list(dir).filter((e) => !e.name.startsWith('.'));
  const out = [{ dir, list }];
  for (const e of list) {
    if (e.dir) out.push(...listWalk(h, storage, dir === '' ? e.name : `${dir}/${e.name}`, [...above, id]));
  }
  return out;
}

/** A small deterministic random source. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/**
 * Random relative paths of files: folders, names past U+FFFF, and
 * dot-names when `dots` (the memory storage refuses them).
 */
function randomFiles(seed, dots = true) {
  const r = rng(seed);
  const files = {};
  for (let i = 0; i < 60; i++) {
    const segs = [];
    for (let d = r(4); d > 0; d--) segs.push(['a', 'b', 'Zed', '\u{1F600}', 'é'][r(5)]);
    if (dots && segs.length > 0 && r(7) === 0) segs[0] = '.git';
    const name = `${dots && r(8) === 0 ? '.' : ''}f${i}.md`;
    files[[...segs, name].join('/')] = 'x'.repeat(r(300));
  }
  return files;
}

function tmpdir(t) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-walk-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

test('fs_walk equals the walk by fs_list: memory storage, any buffer', () => {
  for (let seed = 1; seed <= 12; seed++) {
    const storage = memory(randomFiles(seed, false));
    const h = setup(storage);
    const want = listWalk(h, storage, '');
    for (const cap of [1 << 20, 200, 16]) {
      const { out, calls } = walk(h, '', cap);
      assert.deepEqual(out, want, `seed ${seed}, ${cap} bytes`);
      if (cap === 16) assert.ok(calls > 3, `${calls} calls in 16 bytes`);
    }
    if (want.length > 1) assert.deepEqual(walk(h, want[1].dir, 64).out, listWalk(h, storage, want[1].dir));
  }
});

test('fs_walk equals the walk by fs_list on a folder: links inside, outside, and back up the tree are left out', (t) => {
  for (let seed = 1; seed <= 6; seed++) {
    const dir = tmpdir(t);
    const outside = tmpdir(t);
    fs.writeFileSync(path.join(outside, 'secret.md'), 'no');
    for (const [p, content] of Object.entries(randomFiles(seed))) {
      const full = path.join(dir, ...p.split('/'));
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, content);
    }
    const r = rng(seed * 31);
    const folders = ['', ...new Set(Object.keys(randomFiles(seed)).filter((p) => !p.startsWith('.')).map((p) => p.split('/').slice(0, -1).join('/')))];
    folders.forEach((f, i) => {
      const target = [path.join(dir, ...f.split('/')), outside, dir, path.join(dir, ...folders[r(folders.length)].split('/'))][r(4)];
      fs.symlinkSync(target, path.join(dir, ...f.split('/'), `link${i}`));
    });
    const storage = nodeFs(dir);
    const h = setup(storage);
    const want = listWalk(h, storage, '');
    // The tree is read without following links: what one leads to is walked under its own name.
    assert.ok(want.length > 1 && !want.some((rec) => rec.list.some((e) => e.name.startsWith('link'))), 'a link is listed');
    for (const cap of [1 << 20, 100, 16]) {
      assert.deepEqual(walk(h, '', cap).out, want, `seed ${seed}, ${cap} bytes`);
    }
  }
});

test('fs_walk: a record larger than the buffer comes back as its size, nothing copied', () => {
  const files = { 'a.md': 'x' };
  for (let i = 0; i < 50; i++) files[`big/entry-with-a-long-name-${i}.md`] = 'x';
  files[`${'a'.repeat(150)}/${'é'.repeat(100)}.md`] = 'x'; // lengths past one byte of varint
  const storage = memory(files);
  const h = setup(storage);
  new Uint8Array(h.mem.buffer, 8192, 64).fill(7);
  const [pp, pl] = h.put(16, 'big');
  const n = h.f.fs_walk(pp, pl, 0, 0, 8192, 64);
  assert.ok(n > 64);
  assert.deepEqual([...new Uint8Array(h.mem.buffer, 8192, 64)], Array(64).fill(7));
  const { out, grown } = walk(h, '', 64);
  assert.ok(grown > 0);
  assert.deepEqual(out, listWalk(h, storage, ''));
});

test('fs_walk: folders removed and created between two calls of one walk', () => {
  const files = { 'a/1.md': 'x', 'b/x/2.md': 'x', 'b/y/3.md': 'x', 'c/4.md': 'x', 'd/5.md': 'x' };
  const rm = (storage, p) => {
    for (const f of Object.keys(storage.snapshot()).filter((k) => k.startsWith(`${p}/`))) storage.remove(f);
    for (const d of ['x', 'y']) if (p === 'b') storage.remove(`b/${d}`);
    storage.remove(p);
  };
  const change = (storage, h) => (call) => {
    if (call === 2) {
      rm(storage, 'b');
      storage.write('bb/6.md', enc.encode('x'));
    }
    if (call === 4) rm(storage, 'c');
    // Another walk in between: the host derives this one again from the
    // folder it reached, listing the folders above it anew.
    if (h) walk(h, 'a', 1 << 20);
  };
  // The walk goes on from where the host kept it: a folder gone is left
  // out; one created in a folder already listed is not seen by this walk.
  let storage = memory(files);
  let h = setup(storage);
  assert.deepEqual(walk(h, '', 16, change(storage, null)).out.map((r) => r.dir), ['', 'a', 'c', 'd']);
  // Derived again at each call: the folder created after the point
  // reached is walked, and the last one received, gone, is passed.
  storage = memory(files);
  h = setup(storage);
  assert.deepEqual(walk(h, '', 16, change(storage, h)).out.map((r) => r.dir), ['', 'a', 'bb', 'c', 'd']);
});

test('fs_walk: path rules and codes as fs_list', () => {
  const storage = memory({ 'a/b.md': 'x' });
  const { f, put } = setup(storage);
  for (const [p, after, code] of [
    ['../x', '', codes.INVALID],
    ['/etc', '', codes.INVALID],
    ['.git', '', codes.INVALID],
    ['missing', '', codes.NOT_FOUND],
    ['a/b.md', '', codes.INVALID],
    ['a', 'b/', codes.INVALID],
    ['a', 'a', codes.INVALID],
    ['', '../', codes.INVALID],
    ['', '/etc/', codes.INVALID],
  ]) {
    const [pp, pl] = put(16, p);
    const [ap, al] = after === '' ? [0, 0] : put(2048, after);
    assert.equal(f.fs_walk(pp, pl, ap, al, 8192, 4096), code, `fs_walk(${JSON.stringify(p)}, ${JSON.stringify(after)})`);
  }
  const [pp, pl] = put(16, 'gone');
  const [ap, al] = put(2048, 'gone/');
  assert.equal(f.fs_walk(pp, pl, ap, al, 8192, 4096), 0, 'resuming the walk of a folder gone ends it');
  assert.equal(f.fs_walk(0, 0, 0, 0, 4 * 65536 - 8, 4096), codes.INVALID, 'a buffer outside memory');
});

test('fs_walk says once, through onLog, of each folder it leaves out', () => {
  const mem = memory();
  mem.write('ops/pager/rotation.md', enc.encode('x'));
  mem.write('ops/private/salaries.md', enc.encode('x'));
  const storage = {
    ...mem,
    list(p) {
      if (p === 'ops/private') throw Object.assign(new Error('denied'), { code: 'EACCES' });
      const out = Array.from(mem.list(p));
      // A name the rules refuse, as a folder from another system may have.
      return p === 'ops' ? [{ name: 'old\\notes', dir: true, size: 0, mtime: 0 }, ...out] : out;
    },
  };
  const logs = [];
  const h = setup(storage, (level, msg) => logs.push([level, msg]));
  for (let i = 0; i < 2; i++) {
    const { out } = walk(h, '', 1 << 16);
    assert.deepEqual(out.map((r) => r.dir), ['', 'ops', 'ops/pager']);
  }
  assert.deepEqual(logs, [
    ['warn', 'fs_walk: ops/old\\notes: left out of the memory: the engine refuses its name (backslashes are not allowed)'],
    ['warn', 'fs_walk: ops/private: left out of the memory: this user may not list it (permission denied)'],
  ]);
});
