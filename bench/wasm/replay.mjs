#!/usr/bin/env node
// Replays a bench/wasm request script (workload.mjs) on the wasm module in
// Node, through bindings/js with folder storage, and prints the time of
// every step and every response as JSON for the Go harness (main.go).
//
//   node bench/wasm/replay.mjs --script FILE --dirs DIR1,DIR2,... [--wasm dist/arbor.wasm]
//
// dirs are the memory roots, one per tree of the script, already seeded.

import { readFileSync } from 'node:fs';
import { startEngine, compileArbor, nodeFs } from '../../bindings/js/index.node.js';
import { args } from '../retrieval/corpus.mjs';

const opt = args(process.argv.slice(2), { script: '', dirs: '', wasm: 'dist/arbor.wasm' });
const { trees } = JSON.parse(readFileSync(opt.script, 'utf8'));
const dirs = opt.dirs.split(',');
if (dirs.length !== trees.length) throw new Error(`${trees.length} trees but ${dirs.length} folders`);

const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
// A step's wall time and the processor time of the process meanwhile (the
// main thread runs the module; V8's compiler and GC threads are counted too).
async function timed(f) {
  const t = process.hrtime.bigint();
  const c = process.cpuUsage();
  const value = await f();
  const { user, system } = process.cpuUsage(c);
  return { value, timing: { ms: ms(t), cpuMs: (user + system) / 1000 } };
}
const t = process.hrtime.bigint();
// Compiling is once per process in Node (and per page in a browser); it is
// reported on its own, not in the start of each instance.
const module = await compileArbor(opt.wasm);
const out = { node: process.version, compileMs: ms(t), trees: [] };
for (const [i, tree] of trees.entries()) {
  const storage = nodeFs(dirs[i]);
  const starts = [];
  const start = async () => {
    const { value, timing } = await timed(() => startEngine({ storage, wasm: module, onLog: () => {} }));
    starts.push(timing);
    return value;
  };
  let eng = await start();
  const steps = [];
  for (const step of tree.steps) {
    if (step.restart) {
      await eng.dispose();
      eng = await start();
      steps.push(null);
      continue;
    }
    const { value: response, timing } = await timed(() => eng.request(JSON.stringify(step.request)));
    steps.push({ ...timing, response });
  }
  await eng.dispose();
  out.trees.push({ starts, steps });
}
process.stdout.write(JSON.stringify(out) + '\n');
