// The folder lock (storage/rootlock.js): the protocol it shares with the Go
// host, and a Node memory racing the arbor CLI on one folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { openMemory } from '../index.js';
import { nodeFs } from '../storage/node.js';
import { lockSync, LOCK_PATH, STALE_AFTER_MS } from '../storage/rootlock.js';
import { skipWithoutWasm, tmpdir, defer } from './_engine.mjs';

const cli = new URL('../../../bin/arbor', import.meta.url).pathname;
const skipWithoutCLI = skipWithoutWasm || (fs.existsSync(cli) ? false : 'bin/arbor is missing: run ./build.sh');

/** Plants a lock file as another process would have left it. */
function plant(dir, owner, ageMs = 0) {
  const file = path.join(dir, LOCK_PATH);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, owner ? JSON.stringify(owner) : '');
  const then = new Date(Date.now() - ageMs);
  fs.utimesSync(file, then, then);
  return file;
}

test('one holder at a time; released locks are gone', (t) => {
  const dir = tmpdir(t);
  const release = lockSync(dir);
  const held = JSON.parse(fs.readFileSync(path.join(dir, LOCK_PATH), 'utf8'));
  assert.equal(held.pid, process.pid);
  assert.equal(held.host, os.hostname());
  assert.throws(() => lockSync(dir, { waitMs: 30 }), (err) => err.code === 'EBUSY' && /held by pid/.test(err.message));
  release();
  assert.equal(fs.existsSync(path.join(dir, LOCK_PATH)), false);
  lockSync(dir, { waitMs: 30 })();
});

// Processes take turns: a read-modify-write of a counter under the lock
// loses no increment.
test('processes take turns: no increment is lost', async (t) => {
  const dir = tmpdir(t);
  const counter = path.join(dir, 'n');
  fs.writeFileSync(counter, '0');
  const lockModule = new URL('../storage/rootlock.js', import.meta.url).href;
  const script = `
    import fs from 'node:fs';
    import { lockSync } from ${JSON.stringify(lockModule)};
    for (let i = 0; i < 20; i++) {
      const release = lockSync(${JSON.stringify(dir)});
      const n = Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8'));
      fs.writeFileSync(${JSON.stringify(counter)}, String(n + 1));
      release();
    }`;
  const runs = Array.from({ length: 4 }, () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    return new Promise((resolve) => child.on('exit', resolve));
  });
  assert.deepEqual(await Promise.all(runs), [0, 0, 0, 0]);
  assert.equal(fs.readFileSync(counter, 'utf8'), '80');
});

test('stale locks are broken, live ones respected', async (t) => {
  const dead = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => dead.on('exit', r));
  const host = os.hostname();
  const stale = [
    ['owner died', { pid: dead.pid, host, since: '', token: 'old' }, 0],
    ['untouched on another host', { pid: process.pid, host: 'elsewhere', since: '', token: 'old' }, STALE_AFTER_MS + 60_000],
    ['never written', null, 6_000],
  ];
  for (const [name, owner, age] of stale) {
    const dir = tmpdir(t);
    plant(dir, owner, age);
    const release = lockSync(dir, { waitMs: 5_000 });
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, LOCK_PATH), 'utf8')).pid, process.pid, name);
    assert.equal(fs.existsSync(path.join(dir, `${LOCK_PATH}.break`)), false, name);
    release();
  }
  const live = [
    ['live process here', { pid: process.pid, host, since: '', token: 'x' }, 60_000],
    ['another host, recently touched', { pid: 1 << 30, host: 'elsewhere', since: '', token: 'x' }, 60_000],
    ['being written', null, 0],
  ];
  for (const [name, owner, age] of live) {
    const dir = tmpdir(t);
    plant(dir, owner, age);
    assert.throws(() => lockSync(dir, { waitMs: 30 }), (err) => err.code === 'EBUSY', name);
  }
});

test('a lock taken over while held is left to its new owner', (t) => {
  const dir = tmpdir(t);
  const release = lockSync(dir);
  const file = plant(dir, { pid: process.pid, host: 'other', since: '', token: 'successor' });
  const logged = [];
  t.mock.method(console, 'error', (msg) => logged.push(msg));
  release();
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).token, 'successor');
  assert.match(logged.join('\n'), /taken over/);
});

// A long-lived Node memory and the arbor CLI adding the same entry at the
// same moment: exactly one adds it, the other finds it there, and the text
// on disk is the adder's.
test('a Node memory and the arbor CLI race to add one entry', { skip: skipWithoutCLI }, async (t) => {
  const dir = tmpdir(t);
  execFileSync(cli, ['init', dir]);
  const mem = await openMemory({ storage: nodeFs(dir) });
  defer(t, () => mem.close());
  for (let i = 0; i < 10; i++) {
    const title = `Race ${i}`;
    const child = spawn(cli, ['--root', dir, 'add', '--json', '--path', 'engineering/races', '--title', title,
      '--narrative', 'written by the CLI', '--reason', 'race']);
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    const exited = new Promise((r) => child.on('close', r));
    // The CLI needs a few hundred ms to start: sweep the moment Node
    // writes across the CLI's whole run.
    await new Promise((r) => setTimeout(r, i * 40));
    const mine = await mem.curate([{ type: 'ADD', path: 'engineering/races', title, content: { narrative: { text: 'written by Node' } }, reason: 'race' }]);
    await exited;
    const theirs = JSON.parse(out);
    const statuses = [mine.applied[0].status, theirs.applied[0].status].sort();
    assert.deepEqual(statuses, ['failed', 'success'], `race ${i}: ${JSON.stringify([mine.applied[0], theirs.applied[0]])}`);
    const loser = mine.applied[0].status === 'failed' ? mine.applied[0] : theirs.applied[0];
    assert.match(loser.message, /already exists/);
    const text = fs.readFileSync(path.join(dir, `engineering/races/race_${i}.md`), 'utf8');
    assert.match(text, mine.applied[0].status === 'success' ? /written by Node/ : /written by the CLI/);
  }
});

test('a Node memory holding old state, the arbor CLI and an editor each add to one entry: nothing is lost', { skip: skipWithoutCLI }, async (t) => {
  const dir = tmpdir(t);
  execFileSync(cli, ['init', dir]);
  const p = 'engineering/billing/retry.md';
  execFileSync(cli, ['--root', dir, 'add', '--path', 'engineering/billing', '--title', 'Retry', '--narrative', 'Invoices are retried.', '--reason', 'seed']);
  const mem = await openMemory({ storage: nodeFs(dir), watch: false }); // sees no change until it reads the file again
  defer(t, () => mem.close());
  await mem.search('retried');
  const fact = (statement) => [{ type: 'UPDATE', path: p, content: { facts: [{ statement }] }, reason: 'test' }];
  const want = [];
  for (let i = 0; i < 3; i++) {
    const cli_ = `The CLI's fact number ${i}.`;
    execFileSync(cli, ['--root', dir, 'curate'], { input: JSON.stringify(fact(cli_)) });
    const full = path.join(dir, p);
    const editor = `A person's sentence number ${i}.`;
    fs.writeFileSync(full, fs.readFileSync(full, 'utf8').replace('## Narrative\n', `## Narrative\n${editor}\n`));
    const node = `Node's fact number ${i}.`;
    const res = await mem.curate(fact(node));
    assert.equal(res.applied[0].status, 'success', JSON.stringify(res.applied[0]));
    want.push(cli_, editor, node);
  }
  const text = fs.readFileSync(path.join(dir, p), 'utf8');
  for (const w of want) assert.ok(text.includes(w), `lost: ${w}\n${text}`);
});

// A full disk: the lock file cannot be written, yet a person can still
// search and read their memory; every write fails whole, saying why.
test('a full disk still answers reads; writes fail whole, saying the disk is full', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const add = (title) => ({ type: 'ADD', path: 'engineering/billing', title, content: { narrative: { text: 'the walrus tier costs more' } }, reason: 'test' });
  const before = await openMemory({ storage: nodeFs(dir), watch: false });
  assert.equal((await before.curate([add('Walrus pricing')])).applied[0].status, 'success');
  await before.close();
  const tree = () => fs.readdirSync(path.join(dir, 'engineering/billing')).sort();
  const files = tree();
  const writeSync = fs.writeSync;
  t.mock.method(fs, 'writeSync', (fd, ...rest) => {
    if (fs.fstatSync(fd).isFile()) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return writeSync(fd, ...rest);
  });
  const mem = await openMemory({ storage: nodeFs(dir), watch: false });
  assert.deepEqual((await mem.search('walrus')).results.map((r) => r.path), ['engineering/billing/walrus_pricing.md']);
  assert.match((await mem.read('engineering/billing/walrus_pricing.md')).markdown, /walrus tier/);
  const refused = (await mem.curate([add('Walrus discounts')])).applied[0];
  assert.equal(refused.status, 'failed');
  assert.match(refused.message, /^the disk is full: nothing was written \(/);
  assert.deepEqual(tree(), files);
  assert.equal(fs.existsSync(path.join(dir, LOCK_PATH)), false);
  t.mock.restoreAll();
  assert.equal((await mem.curate([add('Walrus discounts')])).applied[0].status, 'success', 'space is back');
  await mem.close();
});

// A note past the system's path limit (18 folders of 243 bytes, made one
// at a time from inside the one above): nodeFs says ENAMETOOLONG (the
// host's -9, "path too long") where it said EINVAL, and the open steps
// over its folder, every other entry answered, as before.
test('a path past the system limit is ENAMETOOLONG; the memory opens without it', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const make = `const fs = require('node:fs'); for (let i = 0; i < 18; i++) { fs.mkdirSync('${'a'.repeat(243)}'); process.chdir('${'a'.repeat(243)}'); } fs.writeFileSync('note.md', '# Deep\\n\\ndeep text\\n');`;
  execFileSync(process.execPath, ['-e', make], { cwd: dir });
  // rm, which removes folder by folder from inside: fs.rmSync cannot.
  defer(t, () => execFileSync('rm', ['-rf', path.join(dir, 'a'.repeat(243))]));
  const deep = [...Array(18).fill('a'.repeat(243)), 'note.md'].join('/');
  assert.throws(() => nodeFs(dir).read(deep), { name: 'StorageError', code: 'ENAMETOOLONG' });
  const mem = await openMemory({ storage: nodeFs(dir), watch: false });
  defer(t, () => mem.close());
  const added = await mem.curate([{ type: 'ADD', path: 'engineering/billing', title: 'Shallow', content: { narrative: { text: 'shallow text' } }, reason: 'test' }]);
  assert.equal(added.applied[0].status, 'success');
  assert.deepEqual((await mem.search('shallow')).results.map((r) => r.path), ['engineering/billing/shallow.md']);
});
