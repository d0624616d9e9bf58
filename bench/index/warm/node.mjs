#!/usr/bin/env node
// main.go's measurement in Node: the engine module on the folder (nodeFs)
// of a tree whose index is persisted (main.go builds it), opened in a fresh
// engine and asked every question of bench/scale's script. Prints one JSON
// object: the linear memory after the open and after the queries, the
// open's wall and CPU time, and the queries' latency. It opens without the
// script's fixed time, as main.go does by default.
//
//   node bench/index/warm/node.mjs --dir /tmp/segtrees/10000 [--wasm dist/arbor.wasm] [--rounds 1]

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    dir: { type: 'string' },
    wasm: { type: 'string', default: 'dist/arbor.wasm' },
    rounds: { type: 'string', default: '2' },
  },
});
const script = JSON.parse(fs.readFileSync(path.join(opt.dir, 'script.json'), 'utf8'));
const root = path.join(opt.dir, 'tree');
if (!fs.existsSync(path.join(root, '.arbor', 'index'))) throw new Error(`${root} has no persisted index: run main.go on it first`);

const { startEngine, compileArbor, nodeFs } = await import('../../../bindings/js/index.node.js');
const seen = [];
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async (...args) => {
  const out = await instantiate.apply(WebAssembly, args);
  seen.push(out.instance ?? out);
  return out;
};
const linear = () => seen.at(-1).exports.memory.buffer.byteLength / (1 << 20);
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(Math.max(Math.ceil((s.length * p) / 100) - 1, 0), s.length - 1)];
};

const eng = await startEngine({ storage: nodeFs(root), wasm: await compileArbor(opt.wasm), onLog: () => {} });
let id = 0;
const call = async (method, params) => {
  const out = JSON.parse(await eng.request(JSON.stringify({ id: ++id, method, params })));
  if (out.error) throw new Error(`${method}: ${out.error.code}: ${out.error.message}`);
  return out.result;
};
try {
  const r = { host: 'node' };
  let t = performance.now();
  let c = cpu();
  await call('open', {});
  r.openMs = performance.now() - t;
  r.openCpuMs = cpu() - c;
  r.openLinearMiB = linear();
  // Round 0 loads what the questions need; later rounds ask for one more
  // hit each, which the engine's query cache (keyed by the limit) does not
  // answer.
  const first = [];
  const steady = [];
  let steadyCpu = 0;
  for (let round = 0; round < Number(opt.rounds); round++) {
    c = cpu();
    for (const q of script.queries) {
      t = performance.now();
      await call('query', { query: q, limit: script.limit + round });
      (round === 0 ? first : steady).push(performance.now() - t);
    }
    if (round === 0) r.queryCpuMs = (cpu() - c) / first.length;
    else steadyCpu += cpu() - c;
  }
  r.queryLinearMiB = linear();
  r.queryP50Ms = percentile(first, 50);
  r.queryP95Ms = percentile(first, 95);
  r.queries = first.length;
  if (steady.length) {
    r.steadyCpuMs = steadyCpu / steady.length;
    r.steadyP50Ms = percentile(steady, 50);
  }
  await call('close');
  process.stdout.write(JSON.stringify(r) + '\n');
} finally {
  await eng.dispose();
}
