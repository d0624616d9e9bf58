// Memories sharing one storage, in Node: the contract of the optional
// Storage.exclusive and Storage.watch (storage/types.d.ts) that an
// ArborMemory relies on, with a small in-process store that keeps it (one
// saved tree with a generation, a lock, listeners). The IndexedDB adapter,
// which keeps it across tabs, is tested in Chromium (tests/browser).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openMemory } from '../index.js';
import { memory } from '../storage/memory.js';
import { wasmURL, skipWithoutWasm } from './_engine.mjs';

/** A saved tree and a factory of storages on it, each with its own copy. */
function sharedRoot() {
  let saved = new Map();
  let savedGeneration = 0;
  let lock = Promise.resolve();
  const listeners = new Set();

  const storage = () => {
    let mirror = memory();
    let generation = -1;
    let dirty = false;
    const reload = () => {
      mirror = memory(Object.fromEntries(saved));
      generation = savedGeneration;
      dirty = false;
    };
    const files = () => {
      const out = new Map();
      const walk = (dir) => {
        for (const e of mirror.list(dir)) {
          const p = dir === '' ? e.name : `${dir}/${e.name}`;
          if (e.dir) walk(p);
          else out.set(p, mirror.read(p));
        }
      };
      walk('');
      return out;
    };
    const changed = (fn) => (...args) => {
      fn(...args);
      dirty = true;
    };
    const self = {
      read: (p) => mirror.read(p),
      list: (p) => mirror.list(p),
      stat: (p) => mirror.stat(p),
      write: changed((p, b) => mirror.write(p, b)),
      remove: changed((p) => mirror.remove(p)),
      rename: changed((a, b) => mirror.rename(a, b)),
      async load() {
        reload();
      },
      async commit() {
        if (!dirty) return;
        if (generation !== savedGeneration) {
          reload();
          throw Object.assign(new Error('a newer tree was saved'), { code: 'EIO' });
        }
        saved = files();
        generation = ++savedGeneration;
        dirty = false;
        for (const l of listeners) if (l.owner !== self) setTimeout(() => l.fn({ generation }));
      },
      exclusive(fn) {
        const run = lock.then(() => {
          const reloaded = generation >= 0 && !dirty && generation !== savedGeneration;
          if (reloaded) reload();
          return fn(reloaded);
        });
        lock = run.catch(() => {});
        return run;
      },
      watch(fn) {
        const l = { owner: self, fn };
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    return self;
  };
  return { storage, generation: () => savedGeneration };
}

const add = (title, content) => ({ type: 'ADD', path: 'shared/log', title, content, reason: 'shared test' });

test('memories on one shared storage see each other, take turns, and never save over a newer tree', { skip: skipWithoutWasm, timeout: 60_000 }, async () => {
  const root = sharedRoot();
  let bHeard = 0;
  const a = await openMemory({ storage: root.storage(), wasm: wasmURL });
  const b = await openMemory({ storage: root.storage(), wasm: wasmURL, onExternalChange: () => bHeard++ });
  try {
    assert.equal((await a.curate(add('Deploy freeze', 'No deploys on Fridays.'))).applied[0].status, 'success');
    assert.equal((await b.search('deploys fridays')).results[0]?.path, 'shared/log/deploy_freeze.md');
    assert.equal(bHeard, 1, 'B announced that it reloaded');

    // B has not seen A's entry when it asks to add the same one: it reloads first, and fails.
    await a.curate(add('Release owner', 'Ana owns the release.'));
    const stale = await b.curate(add('Release owner', 'Bo owns the release.'));
    assert.equal(stale.applied[0].status, 'failed');
    assert.match(stale.applied[0].message, /already exists/);
    assert.match((await a.read('shared/log/release_owner.md')).markdown, /Ana owns/);

    // Both at once: every entry lands, and both count them all.
    const writes = [];
    for (let i = 0; i < 3; i++) writes.push(a.curate(add(`From A ${i}`, `Note ${i} of A.`)), b.curate(add(`From B ${i}`, `Note ${i} of B.`)));
    for (const r of await Promise.all(writes)) assert.equal(r.applied[0].status, 'success');
    assert.equal((await a.stats()).entries, 8);
    assert.equal((await b.stats()).entries, 8);

    // Idle memories catch up on the listener's call, without a call of their own.
    const before = bHeard;
    await a.curate(add('Late note', 'Written while B is idle.'));
    for (let i = 0; i < 100 && bHeard === before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(bHeard, before + 1, 'B reloaded while idle');

    // A memory behind the saved tree closes without writing anything.
    await a.curate(add('Last word', 'A writes once more.'));
    const generation = root.generation();
    await b.close();
    assert.equal(root.generation(), generation, 'the stale close saved nothing');
  } finally {
    await a.close();
    await b.close();
  }
});
