// The storage adapters: the Map-backed store and the confined Node folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { memory } from '../storage/memory.js';
import { nodeFs } from '../storage/node.js';
import { ArborHost, codes } from '../abi.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const code = (c) => (err) => err.code === c;

function tmpdir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-js-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('memory(): files, implicit folders, snapshot', () => {
  const m = memory({ 'a/b/c.md': 'c', 'a/x.md': enc.encode('x') });
  assert.deepEqual(m.list('').map((e) => e.name), ['a']);
  assert.deepEqual(m.list('a').map((e) => [e.name, e.dir, e.size]), [['b', true, 0], ['x.md', false, 1]]);
  assert.equal(dec.decode(m.read('a/b/c.md')), 'c');
  assert.equal(m.stat('a/b').dir, true);
  assert.equal(m.stat('').dir, true);
  assert.throws(() => m.read('a/nope.md'), code('ENOENT'));
  assert.throws(() => m.read('a'), code('EINVAL'));
  assert.throws(() => m.read('../x'), code('EINVAL'));
  assert.throws(() => m.remove('a'), code('EINVAL'));
  assert.throws(() => m.write('a/x.md/y.md', enc.encode('')), code('EINVAL'));
  // The store keeps its own copy of what is written and of what is read.
  const bytes = enc.encode('abc');
  m.write('a/y.md', bytes);
  bytes[0] = 0;
  m.read('a/y.md')[0] = 0;
  assert.equal(m.snapshot()['a/y.md'], 'abc');
  assert.deepEqual(Object.keys(m.snapshot()), ['a/b/c.md', 'a/x.md', 'a/y.md']);
});

test('memory(): rename files and folders, remove empty folders', () => {
  const m = memory({ 'a/b/c.md': 'c', 'a/b/d/e.md': 'e', 'z.md': 'z' });
  m.rename('z.md', 'n/m/z.md');
  m.rename('a/b', 'q/b2');
  assert.deepEqual(m.snapshot(), { 'n/m/z.md': 'z', 'q/b2/c.md': 'c', 'q/b2/d/e.md': 'e' });
  assert.deepEqual(m.list('q/b2').map((e) => e.name), ['c.md', 'd']);
  assert.deepEqual(m.list('a'), []);
  assert.throws(() => m.rename('q', 'q/inner'), code('EINVAL'));
  m.remove('a');
  assert.throws(() => m.stat('a'), code('ENOENT'));
  m.write('n/m/z.md', enc.encode('z2'));
  m.rename('n/m/z.md', 'q/b2/c.md'); // replaces
  assert.equal(m.snapshot()['q/b2/c.md'], 'z2');
});

test('nodeFs: read, write, list, stat, rename, remove', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  s.write('a/b/c.md', enc.encode('hello'));
  assert.equal(fs.readFileSync(path.join(dir, 'a/b/c.md'), 'utf8'), 'hello');
  assert.equal(dec.decode(s.read('a/b/c.md')), 'hello');
  s.write('a/b/c.md', enc.encode('again'));
  assert.equal(dec.decode(s.read('a/b/c.md')), 'again');
  const part = new Uint8Array(4);
  assert.equal(s.readAt('a/b/c.md', part, 1), 4);
  assert.equal(dec.decode(part), 'gain');
  assert.equal(s.readAt('a/b/c.md', part, 3), 2, 'fewer at the end');
  assert.equal(s.readAt('a/b/c.md', part, 9), 0);
  assert.throws(() => s.readAt('a/b/none.md', part, 0), code('ENOENT'));
  assert.throws(() => s.readAt('a/b', part, 0), code('EINVAL'));
  s.write('.arbor/state.json', enc.encode('{}'));
  s.write('a/z.md', enc.encode(''));
  assert.deepEqual(s.list('a').map((e) => [e.name, e.dir, e.size]), [['b', true, 0], ['z.md', false, 0]]);
  assert.deepEqual(s.list('').map((e) => e.name), ['.arbor', 'a']);
  const st = s.stat('a/b/c.md');
  assert.equal(st.name, 'c.md');
  assert.equal(st.size, 5);
  assert.ok(Math.abs(st.mtime - Date.now()) < 60_000);
  assert.equal(s.stat('').dir, true);
  s.rename('a/b/c.md', 'x/y/c.md');
  assert.equal(dec.decode(s.read('x/y/c.md')), 'again');
  assert.throws(() => s.read('a/b/c.md'), code('ENOENT'));
  assert.throws(() => s.read('x'), code('EINVAL'));
  assert.throws(() => s.remove('x'), code('EINVAL'), 'not empty');
  s.remove('x/y/c.md');
  s.remove('x/y');
  assert.throws(() => s.stat('x/y'), code('ENOENT'));
  assert.throws(() => s.remove(''), code('EINVAL'));
  assert.throws(() => s.write('a/z.md/in.md', enc.encode('')), code('EINVAL'));
});

// A file's time is the number of milliseconds the Go hosts list (its
// nanoseconds truncated): mtimeMs, a double, rounds a time just short of
// the next millisecond up to it, and a root used by the CLI and by Node in
// turn would have such files (about 1 in 5,000) read again at every open.
// Node cannot set a time that precise (utimes takes seconds as a double);
// GNU touch can.
test('nodeFs: modification times are whole milliseconds, truncated as the Go hosts truncate them', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  s.write('a/late.md', enc.encode('x'));
  const full = path.join(dir, 'a', 'late.md');
  try {
    execFileSync('touch', ['-m', '-d', '@1764123456.999999999', full], { stdio: 'ignore' });
  } catch {
    return t.skip('needs GNU touch to set a time to the nanosecond');
  }
  assert.equal(fs.statSync(full, { bigint: true }).mtimeNs, 1764123456999999999n);
  assert.equal(s.list('a')[0].mtime, 1764123456999);
  assert.equal(s.stat('a/late.md').mtime, 1764123456999);
  // The change time and inode, which no tool sets back, as the Go hosts give them.
  const st = fs.statSync(full, { bigint: true });
  for (const e of [s.list('a')[0], s.stat('a/late.md')]) {
    assert.equal(e.ctime, Number(st.ctimeNs / 1_000_000n));
    assert.equal(e.ino, Number(st.ino));
  }
});

test('nodeFs: a folder on a network file system is scanned as well as watched', async (t) => {
  const dir = tmpdir(t);
  // What another machine writes to a share raises no event here: with no
  // change at all, the watcher's listener still hears a scan (null).
  const heard = [];
  const stop = nodeFs(dir, { network: true }).changes((paths) => heard.push(paths));
  t.after(stop);
  for (const deadline = Date.now() + 10_000; !heard.includes(null); ) {
    if (Date.now() > deadline) assert.fail(`no scan asked for: ${JSON.stringify(heard)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

test('nodeFs: swap replaces only what was read, and leaves no temporary file', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  const enc = new TextEncoder();
  s.swap('a.md', enc.encode('one'), new Uint8Array(0), false);
  assert.throws(() => s.swap('a.md', enc.encode('two'), enc.encode('nope'), true), (err) => err.code === 'ECHANGED');
  assert.throws(() => s.swap('a.md', enc.encode('two'), new Uint8Array(0), false), (err) => err.code === 'ECHANGED');
  s.swap('a.md', enc.encode('two'), enc.encode('one'), true);
  assert.equal(fs.readFileSync(path.join(dir, 'a.md'), 'utf8'), 'two');
  assert.deepEqual(fs.readdirSync(dir), ['a.md']);
});

test('nodeFs: readAt keeps files open but reads what the path names now', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  const p = '.arbor/index/a.seg';
  const full = path.join(dir, p);
  const at = () => {
    const part = new Uint8Array(4);
    return dec.decode(part.subarray(0, s.readAt(p, part, 2)));
  };
  s.write(p, enc.encode('0123456789'));
  assert.equal(at(), '2345');
  assert.equal(at(), '2345');
  s.write(p, enc.encode('abcdefghij')); // a new file renamed over it
  assert.equal(at(), 'cdef');
  fs.writeFileSync(full, 'ABCDEFGHIJKL'); // the same file rewritten
  assert.equal(at(), 'CDEF');
  fs.rmSync(full);
  assert.throws(() => s.readAt(p, new Uint8Array(4), 2), code('ENOENT'));
  // A link swapped in for a file read before is checked again.
  const outside = path.join(tmpdir(t), 'secret');
  fs.writeFileSync(outside, '0123456789');
  s.write(p, enc.encode('0123456789'));
  assert.equal(at(), '2345');
  fs.rmSync(full);
  fs.symlinkSync(outside, full);
  assert.throws(() => s.readAt(p, new Uint8Array(4), 2), code('EACCES'));
});

test('nodeFs: a FIFO or a socket named like a note is refused, not waited on', { skip: process.platform === 'win32' }, (t) => {
  const dir = tmpdir(t);
  fs.mkdirSync(path.join(dir, 'ops'));
  execFileSync('mkfifo', [path.join(dir, 'ops/pipe.md')]);
  // A read of the FIFO waited for a writer, for good: in a child, so that
  // the test fails instead of hanging.
  const script = `
    import { nodeFs } from ${JSON.stringify(new URL('../storage/node.js', import.meta.url).href)};
    const s = nodeFs(${JSON.stringify(dir)});
    try { s.read('ops/pipe.md'); console.log('read'); } catch (err) { console.log(err.code); }`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000, encoding: 'utf8' });
  assert.equal(out.trim(), 'EINVAL');
  const sock = path.join(dir, 'ops/sock.md');
  const made = spawnSync('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(sock)})`]);
  if (made.status === 0) assert.throws(() => nodeFs(dir).read('ops/sock.md'), code('EINVAL'));
});

test('nodeFs: a walk leaves out a sub-folder this user may not list', { skip: process.platform === 'win32' || process.getuid?.() === 0 ? 'root lists every folder' : false }, (t) => {
  const dir = tmpdir(t);
  for (const p of ['ops/pager/rotation.md', 'ops/private/salaries.md', 'zz/last.md']) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), 'x');
  }
  fs.chmodSync(path.join(dir, 'ops/private'), 0);
  try {
    // The walk an open makes (fs_walk): it threw, and the open failed.
    const walk = Buffer.from(new ArborHost({ storage: nodeFs(dir) }).walkAnswer('', null, 1 << 20));
    assert.ok(walk.includes('ops/pager') && walk.includes('zz'), 'the other folders are walked');
    assert.ok(!walk.includes('ops/private'));
  } finally {
    fs.chmodSync(path.join(dir, 'ops/private'), 0o755); // before tmpdir's removal
  }
});

test('nodeFs: creates its folder', (t) => {
  const dir = path.join(tmpdir(t), 'new', 'root');
  nodeFs(dir).write('a.md', enc.encode('a'));
  assert.equal(fs.readFileSync(path.join(dir, 'a.md'), 'utf8'), 'a');
});

test('nodeFs: traversal and absolute paths are denied', (t) => {
  const base = tmpdir(t);
  const dir = path.join(base, 'root');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(base, 'secret.md'), 'secret');
  const s = nodeFs(dir);
  for (const p of ['../secret.md', 'a/../../secret.md', path.join(base, 'secret.md'), '..\\secret.md']) {
    assert.throws(() => s.read(p), code('EACCES'), p);
    assert.throws(() => s.write(p, enc.encode('x')), code('EACCES'), p);
    assert.throws(() => s.stat(p), code('EACCES'), p);
  }
  assert.throws(() => s.read('.git/config'), code('EINVAL'));
  assert.throws(() => s.read('a//b'), code('EINVAL'));
  assert.equal(fs.readFileSync(path.join(base, 'secret.md'), 'utf8'), 'secret');
});

test('nodeFs: symbolic links out of the root are refused; links inside are not followed', (t) => {
  const base = tmpdir(t);
  const dir = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(dir);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.md'), 'secret');
  fs.symlinkSync(outside, path.join(dir, 'escape'), 'dir');
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(dir, 'leak.md'));
  fs.mkdirSync(path.join(dir, 'real'));
  fs.writeFileSync(path.join(dir, 'real', 'in.md'), 'in');
  fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'alias'), 'dir');
  const s = nodeFs(dir);
  assert.throws(() => s.read('escape/secret.md'), code('EACCES'));
  assert.throws(() => s.write('escape/new.md', enc.encode('x')), code('EACCES'));
  assert.throws(() => s.list('escape'), code('EACCES'));
  assert.throws(() => s.read('leak.md'), code('EACCES'));
  assert.throws(() => s.readAt('leak.md', new Uint8Array(4), 0), code('EACCES'));
  assert.throws(() => s.readAt('escape/secret.md', new Uint8Array(4), 0), code('EACCES'));
  assert.throws(() => s.write('leak.md', enc.encode('x')), code('EACCES'));
  assert.throws(() => s.rename('real/in.md', 'escape/in.md'), code('EACCES'));
  assert.deepEqual(fs.readdirSync(outside), ['secret.md']);
  assert.equal(fs.readFileSync(path.join(outside, 'secret.md'), 'utf8'), 'secret');
  // Listings leave out links that leave the root, and the ones inside: the
  // tree is read without following links, what one leads to under its own name.
  assert.deepEqual(s.list('').map((e) => [e.name, e.dir]), [['real', true]]);
  assert.throws(() => s.read('alias/in.md'), code('EACCES'));
  // Writes never pass through a link, even one inside the root: removing
  // alias/in.md would remove real/in.md, which a DELETE of the link's
  // folder must never do. The link itself may go.
  assert.throws(() => s.remove('alias/in.md'), code('EACCES'));
  assert.throws(() => s.write('alias/in.md', enc.encode('x')), code('EACCES'));
  assert.throws(() => s.append('alias/log.md', enc.encode('x')), code('EACCES'));
  assert.throws(() => s.rename('alias/in.md', 'moved.md'), code('EACCES'));
  assert.throws(() => s.rename('real/in.md', 'alias/new.md'), code('EACCES'));
  assert.equal(fs.readFileSync(path.join(dir, 'real', 'in.md'), 'utf8'), 'in');
  // A link at the path itself is refused too, never replaced by a file.
  fs.symlinkSync(path.join(dir, 'real', 'in.md'), path.join(dir, 'real', 'twin.md'));
  assert.throws(() => s.write('real/twin.md', enc.encode('x')), code('EACCES'));
  assert.throws(() => s.swap('real/twin.md', enc.encode('x'), enc.encode('in'), true), code('EACCES'));
  assert.ok(fs.lstatSync(path.join(dir, 'real', 'twin.md')).isSymbolicLink());
  assert.equal(fs.readFileSync(path.join(dir, 'real', 'in.md'), 'utf8'), 'in');
  fs.unlinkSync(path.join(dir, 'real', 'twin.md'));
  // Through the host ABI the same escape is -2, a malformed path -3.
  const mem = new WebAssembly.Memory({ initial: 1 });
  const host = new ArborHost({ storage: s });
  host.bind({ exports: { memory: mem } });
  const put = (str, at) => (new Uint8Array(mem.buffer).set(enc.encode(str), at), [at, enc.encode(str).length]);
  assert.equal(host.imports.fs_read(...put('escape/secret.md', 0), 1000, 100), codes.DENIED);
  assert.equal(host.imports.fs_read(...put('../outside/secret.md', 0), 1000, 100), codes.INVALID);
});

// A walk lists each folder right after its parent, which found it: the
// folder's path is then checked by its identity instead of resolved again.
// A folder replaced by a link since its parent's listing, or by another
// folder, is resolved as any path is.
test('nodeFs: a folder replaced by a link or another folder since its parent was listed is resolved again', { skip: process.platform === 'win32' }, (t) => {
  const base = tmpdir(t);
  const dir = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.md'), 'secret');
  for (const f of ['a', 'b', 'c']) {
    fs.mkdirSync(path.join(dir, f), { recursive: true });
    fs.writeFileSync(path.join(dir, f, `${f}.md`), f);
  }
  const s = nodeFs(dir);
  const names = (p) => s.list(p).map((e) => e.name);
  assert.deepEqual(names(''), ['a', 'b', 'c']);
  assert.deepEqual(names('a'), ['a.md']); // as listed
  // b is now a link out of the root, c a link to a: refused, as without
  // the listing before.
  fs.renameSync(path.join(dir, 'b'), path.join(base, 'b-moved'));
  fs.symlinkSync(outside, path.join(dir, 'b'), 'dir');
  fs.rmSync(path.join(dir, 'c'), { recursive: true });
  fs.symlinkSync(path.join(dir, 'a'), path.join(dir, 'c'), 'dir');
  assert.throws(() => s.list('b'), code('EACCES'));
  assert.throws(() => s.list('c'), code('EACCES'));
  // A folder made again under the name of one listed: listed as it is now.
  fs.rmSync(path.join(dir, 'b'));
  fs.rmSync(path.join(dir, 'c'));
  assert.deepEqual(names(''), ['a']);
  fs.rmSync(path.join(dir, 'a'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'a'));
  fs.writeFileSync(path.join(dir, 'a', 'new.md'), 'new');
  assert.deepEqual(names('a'), ['new.md']);
  // And gone: not found.
  assert.deepEqual(names(''), ['a']);
  fs.rmSync(path.join(dir, 'a'), { recursive: true });
  assert.throws(() => s.list('a'), code('ENOENT'));
});

test('nodeFs: a symbolic link inside the tree is not followed: what it leads to is read once, under its own name', (t) => {
  const dir = tmpdir(t);
  const put = (p, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  };
  put('eng/deploy/deploy.md', 'deploy');
  put('misc/plain.md', 'plain');
  put('ops/own.md', 'own');
  put('.arbor/manifest.json', '{}');
  fs.symlinkSync('../eng', path.join(dir, 'ops', 'alias'), 'dir');
  fs.symlinkSync('../misc/plain.md', path.join(dir, 'ops', 'plain.md'));
  fs.symlinkSync(path.join(dir, 'eng'), path.join(dir, 'ops', 'absolute'), 'dir');
  fs.symlinkSync('..', path.join(dir, 'ops', 'up'), 'dir');
  fs.symlinkSync('manifest.json', path.join(dir, '.arbor', 'ingest.json'));
  const s = nodeFs(dir);
  // Listings leave the links out.
  assert.deepEqual(s.list('ops').map((e) => e.name), ['own.md']);
  // A read, a listing or a stat naming a link, or a path through one, is
  // refused, naming the path to read instead.
  for (const [p, real] of [
    ['ops/alias', '"eng"'],
    ['ops/alias/deploy', '"eng/deploy"'],
    ['ops/alias/deploy/deploy.md', '"eng/deploy/deploy.md"'],
    ['ops/absolute/deploy', '"eng/deploy"'],
    ['ops/plain.md', '"misc/plain.md"'],
    ['ops/up/misc/plain.md', '"misc/plain.md"'],
  ]) {
    assert.throws(() => s.read(p), (err) => err.code === 'EACCES' && err.message.includes('symbolic link') && err.message.includes(real), `read ${p}`);
    assert.throws(() => s.readAt(p, new Uint8Array(4), 0), code('EACCES'), `readAt ${p}`);
    assert.throws(() => s.stat(p), code('EACCES'), `stat ${p}`);
    assert.throws(() => s.list(p), code('EACCES'), `list ${p}`);
  }
  // In .arbor a link inside the root is read as before.
  assert.equal(dec.decode(s.read('.arbor/ingest.json')), '{}');
  // The link itself may still be removed; nothing it leads to changes.
  s.remove('ops/alias');
  assert.equal(fs.readFileSync(path.join(dir, 'eng', 'deploy', 'deploy.md'), 'utf8'), 'deploy');
});

test('nodeFs: atomic write leaves no temporary file, even when it fails', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  for (let i = 0; i < 20; i++) s.write('a/b.md', enc.encode(`version ${i}`));
  assert.deepEqual(fs.readdirSync(path.join(dir, 'a')), ['b.md']);
  assert.equal(fs.readFileSync(path.join(dir, 'a/b.md'), 'utf8'), 'version 19');
  // The destination is a non-empty folder: the rename fails, the temp file goes.
  fs.mkdirSync(path.join(dir, 'a/c.md'));
  fs.writeFileSync(path.join(dir, 'a/c.md/x'), 'x');
  assert.throws(() => s.write('a/c.md', enc.encode('x')), code('EINVAL'));
  assert.deepEqual(fs.readdirSync(path.join(dir, 'a')).sort(), ['b.md', 'c.md']);
});

test('nodeFs: an append that fails part way (a full disk) leaves the file as it was', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  s.append('.arbor/audit.jsonl', enc.encode('{"op":"ADD"}\n'));
  const write = fs.writeSync;
  t.mock.method(fs, 'writeSync', (fd, buf, off, len) => {
    write(fd, buf, off, Math.floor(len / 2));
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  });
  for (const p of ['.arbor/audit.jsonl', '.arbor/new.jsonl']) {
    assert.throws(() => s.append(p, enc.encode('{"op":"UPDATE"}\n')), /no space left/);
  }
  t.mock.restoreAll();
  assert.equal(fs.readFileSync(path.join(dir, '.arbor/audit.jsonl'), 'utf8'), '{"op":"ADD"}\n');
  assert.deepEqual(fs.readdirSync(path.join(dir, '.arbor')), ['audit.jsonl']);
});

test('nodeFs: a file whose name is near the 255-byte limit is written and swapped', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  // A person's long note: the temporary file beside it must fit too.
  const name = `ops/${'n'.repeat(245)}.md`;
  fs.mkdirSync(path.join(dir, 'ops'));
  fs.writeFileSync(path.join(dir, name), 'one');
  s.swap(name, enc.encode('two'), enc.encode('one'), true);
  s.write(name, enc.encode('three'));
  assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), 'three');
  assert.deepEqual(fs.readdirSync(path.join(dir, 'ops')), [path.basename(name)]);
});

test('nodeFs: a write that fails (a full disk) leaves neither its file nor the folders it made', (t) => {
  const dir = tmpdir(t);
  const s = nodeFs(dir);
  fs.mkdirSync(path.join(dir, 'ops'));
  t.mock.method(fs, 'writeSync', () => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  });
  assert.throws(() => s.write('ops/oncall/pager/rota.md', enc.encode('x')), /no space left/);
  t.mock.restoreAll();
  assert.deepEqual(fs.readdirSync(path.join(dir, 'ops')), []);
});

test('nodeFs: a full disk or quota is ENOSPC, which the host answers as -8 (NO_SPACE)', (t) => {
  const s = nodeFs(tmpdir(t));
  for (const errno of ['ENOSPC', 'EDQUOT']) {
    t.mock.method(fs, 'writeSync', () => {
      throw Object.assign(new Error(`${errno}: no space left, write`), { code: errno });
    });
    assert.throws(() => s.write('ops/rota.md', enc.encode('x')), { name: 'StorageError', code: 'ENOSPC' });
    t.mock.restoreAll();
  }
});
