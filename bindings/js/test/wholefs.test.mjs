// Whole writes in .git for isomorphic-git in Node (bindings/js/sync/wholefs.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as git from 'isomorphic-git';
import { wholeGitWrites } from '../sync/wholefs.js';
import { tmpdir } from './_engine.mjs';

test('a file written in .git is put in place whole, by a rename from the repository folder', async (t) => {
  const dir = tmpdir(t);
  const ref = path.join(dir, '.git', 'refs', 'heads', 'main');
  fs.mkdirSync(path.dirname(ref), { recursive: true });
  fs.writeFileSync(ref, 'old\n');
  const seen = [];
  // The rename that puts the file in place is the only change to it: until
  // then it holds the old reference, never an empty or half-written one.
  const promises = Object.create(fs.promises);
  promises.rename = async (from, to) => {
    seen.push([path.dirname(from), fs.readFileSync(to, 'utf8'), fs.readFileSync(from, 'utf8')]);
    return fs.promises.rename(from, to);
  };
  const whole = wholeGitWrites(/** @type {any} */ ({ ...fs, promises }));
  await whole.promises.writeFile(ref, 'new\n', 'utf8');
  assert.equal(fs.readFileSync(ref, 'utf8'), 'new\n');
  assert.deepEqual(seen, [[path.join(dir, '.git'), 'old\n', 'new\n']]);
  assert.deepEqual(fs.readdirSync(path.join(dir, '.git')).filter((n) => n.startsWith('arbor-write-')), []);

  // A file outside .git is written as node:fs writes it.
  await whole.promises.writeFile(path.join(dir, 'note.md'), 'text');
  assert.equal(fs.readFileSync(path.join(dir, 'note.md'), 'utf8'), 'text');
  assert.equal(seen.length, 1);

  // A failed write leaves the old file and nothing beside it.
  fs.mkdirSync(path.join(dir, '.git', 'refs', 'heads', 'dir'));
  await assert.rejects(whole.promises.writeFile(path.join(dir, '.git', 'refs', 'heads', 'dir'), 'x'));
  assert.ok(fs.statSync(path.join(dir, '.git', 'refs', 'heads', 'dir')).isDirectory());
  assert.deepEqual(fs.readdirSync(path.join(dir, '.git')).filter((n) => n.startsWith('arbor-write-')), []);
});

test('what a killed write left in .git is removed once old', async (t) => {
  const dir = tmpdir(t);
  const gitdir = path.join(dir, '.git');
  fs.mkdirSync(gitdir, { recursive: true });
  const stale = path.join(gitdir, 'arbor-write-1-1');
  const recent = path.join(gitdir, 'arbor-write-2-1');
  fs.writeFileSync(stale, 'half');
  fs.writeFileSync(recent, 'half');
  const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
  fs.utimesSync(stale, old, old);
  await wholeGitWrites(fs).promises.writeFile(path.join(gitdir, 'HEAD'), 'ref: refs/heads/main\n');
  assert.equal(fs.existsSync(stale), false);
  assert.equal(fs.existsSync(recent), true);
});

test('isomorphic-git commits and reads back through it', async (t) => {
  const dir = tmpdir(t);
  const whole = wholeGitWrites(fs);
  await git.init({ fs: whole, dir, defaultBranch: 'main' });
  fs.writeFileSync(path.join(dir, 'a.md'), 'a\n');
  await git.add({ fs: whole, dir, filepath: 'a.md' });
  const oid = await git.commit({ fs: whole, dir, message: 'a', author: { name: 'Test', email: 'test@example.com', timestamp: 1700000000, timezoneOffset: 0 } });
  assert.equal(await git.resolveRef({ fs, dir, ref: 'main' }), oid);
  assert.equal(fs.readFileSync(path.join(dir, '.git', 'refs', 'heads', 'main'), 'utf8').trim(), oid);
  const status = await git.statusMatrix({ fs, dir });
  assert.deepEqual(status, [['a.md', 1, 1, 1]]);
});
