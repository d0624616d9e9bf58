#!/usr/bin/env node
// Arbor's wasm module in Node (bindings/js, memory storage) on a subset of
// the benchmark: the first --conversations LoCoMo conversations and the
// first --questions LongMemEval questions, with the same entries and
// questions as the native run. Prints JSON: build rate, query latency by
// tier, and the rankings, which the Go harness compares with the native
// ones. Needs dist/arbor.wasm (./build.sh wasm).
//
//   node bench/retrieval/arbor-wasm.mjs --locomo FILE --longmemeval FILE

import { openMemory, memory } from '../../bindings/js/index.node.js';
import {
  args, log, loadLocomo, loadLongMemEval, locomoUnits, lmeUnits, operation, unitBytes, bySession, dedupe, parseLMEDate,
} from './corpus.mjs';

const opt = args(process.argv.slice(2), { locomo: '', longmemeval: '', conversations: 2, questions: 10, 'lme-turns': 0, 'locomo-context': 0 });
const TOP_K = 10;
const now = () => process.hrtime.bigint();
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;

async function build(units, fixedTime) {
  const t = now();
  const mem = await openMemory({ storage: memory(), fixedTime });
  let failed = 0;
  for (const g of bySession(units)) {
    const res = await mem.curate(g.map(operation));
    failed += res.summary.failed;
  }
  return { mem, ms: ms(t), failed };
}

async function ask(mem, q, limit, lat) {
  const t = now();
  const res = await mem.query(q, { limit });
  const d = ms(t);
  const key = `${res.tier} ${res.tierName}`;
  (lat[key] ||= []).push(d);
  return res;
}

function total() { return { trees: 0, entries: 0, bytes: 0, ms: 0, failed: 0 }; }

async function runLocomo(path) {
  const { convs } = loadLocomo(path);
  const out = { build: total(), latencyMs: {}, repeatLatencyMs: {}, rankings: {} };
  for (const c of convs.slice(0, opt.conversations)) {
    const units = locomoUnits(c, opt['locomo-context']);
    const byPath = new Map(units.map((u) => [u.path, u]));
    const last = c.sessions[c.sessions.length - 1]?.date;
    const asked = last ? new Date(last.getTime() + 24 * 3600e3) : new Date();
    const b = await build(units, asked);
    Object.assign(out.build, { trees: out.build.trees + 1, entries: out.build.entries + units.length, ms: out.build.ms + b.ms, failed: out.build.failed + b.failed });
    out.build.bytes += units.reduce((a, u) => a + unitBytes(u), 0);
    for (const q of c.questions) {
      const res = await ask(b.mem, q.text, TOP_K, out.latencyMs);
      out.rankings[q.key] = res.results.map((h) => byPath.get(h.path)?.id ?? '');
    }
    for (const q of c.questions) await ask(b.mem, q.text, TOP_K, out.repeatLatencyMs);
    await b.mem.close();
    log(`wasm LoCoMo ${c.sampleId}: ${units.length} entries in ${b.ms.toFixed(0)} ms`);
  }
  return out;
}

async function runLME(path) {
  const { questions } = loadLongMemEval(path);
  const out = { build: total(), latencyMs: {}, repeatLatencyMs: {}, rankings: {} };
  const limit = opt['lme-turns'] > 0 ? 100 : TOP_K;
  for (const q of questions.slice(0, opt.questions)) {
    const units = lmeUnits(q, opt['lme-turns']);
    const byPath = new Map(units.map((u) => [u.path, u]));
    const b = await build(units, parseLMEDate(q.question_date) || new Date());
    Object.assign(out.build, { trees: out.build.trees + 1, entries: out.build.entries + units.length, ms: out.build.ms + b.ms, failed: out.build.failed + b.failed });
    out.build.bytes += units.reduce((a, u) => a + unitBytes(u), 0);
    const res = await ask(b.mem, q.question, limit, out.latencyMs);
    out.rankings[q.question_id] = dedupe(res.results.map((h) => byPath.get(h.path)?.session ?? -1)).slice(0, TOP_K);
    await ask(b.mem, q.question, limit, out.repeatLatencyMs);
    await b.mem.close();
  }
  log(`wasm LongMemEval: ${out.build.trees} questions, ${out.build.entries} entries in ${out.build.ms.toFixed(0)} ms`);
  return out;
}

const out = { system: 'arbor-wasm', node: process.version };
if (opt.locomo) out.locomo = await runLocomo(opt.locomo);
if (opt.longmemeval) out.longmemeval = await runLME(opt.longmemeval);
process.stdout.write(JSON.stringify(out) + '\n');
