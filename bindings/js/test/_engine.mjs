// Shared by the end-to-end tests: where the engine module is, and a
// temporary folder that is removed after the test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const wasmURL = new URL('../../../dist/arbor.wasm', import.meta.url);

/** false when dist/arbor.wasm exists, else the reason to skip. */
export const skipWithoutWasm = fs.existsSync(wasmURL) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

export function tmpdir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-e2e-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
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
