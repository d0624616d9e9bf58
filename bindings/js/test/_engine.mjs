// Shared by the end-to-end tests: where the engine module is, and a
// temporary folder that is removed after the test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const wasmURL = new URL('../../../dist/arbor.wasm', import.meta.url);

/** false when dist/arbor.wasm exists, else the reason to skip. */
export const skipWithoutWasm = fs.existsSync(wasmURL) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

/** @type {WeakMap<object, Array<() => unknown>>} */
const cleanups = new WeakMap();

/**
 * Runs fn after the test, before what was deferred earlier (last in,
 * first out, as Go's t.Cleanup): node:test runs t.after hooks in the order
 * they were added, which would remove a memory's folder before the
 * memory's close writes its index into it.
 *
 * @param {import('node:test').TestContext} t
 * @param {() => unknown} fn
 */
export function defer(t, fn) {
  let fns = cleanups.get(t);
  if (!fns) {
    const list = /** @type {Array<() => unknown>} */ ([]);
    fns = list;
    cleanups.set(t, list);
    t.after(async () => {
      let failure;
      for (let f = list.pop(); f; f = list.pop()) {
        try {
          await f();
        } catch (err) {
          failure ??= err; // the others still run
        }
      }
      if (failure) throw failure;
    });
  }
  fns.push(fn);
}

export function tmpdir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-e2e-'));
  defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The operation of docs/ABI.md §4.2. */
export const invoiceOp = {
  type: 'ADD',
  path: 'engineering/billing',
  title: 'Invoice retry policy',
  content: {
    narrative: { rules: 'Failed invoices are retried three times, then escalated.' },
    tags: ['billing'],
    keywords: ['invoice', 'retry'],
  },
  reason: 'record the agreed retry policy',
};
