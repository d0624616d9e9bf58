#!/usr/bin/env node
// MiniSearch peer of the retrieval benchmark: the same trees as Arbor's
// (one document per LoCoMo turn, one per LongMemEval session), indexed by
// MiniSearch with the ByteRover settings — fields title, content and path,
// boost title 3 and path 1.5, fuzzy 0.2, prefix — and the same questions.
// Prints JSON: build and query timing, metrics, and (with --rankings) every
// question's ranking, which the Go harness rescores with its own metrics.
//
//   node bench/retrieval/minisearch.mjs --locomo FILE --longmemeval FILE [--rankings]

import MiniSearch from 'minisearch';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  args, log, loadLocomo, loadLongMemEval, locomoUnits, lmeUnits, searchText, unitBytes,
  dedupe, locomoMetrics, lmeMetrics, percentile,
} from './corpus.mjs';

const opt = args(process.argv.slice(2), { locomo: '', longmemeval: '', rankings: false, 'lme-turns': 0, 'locomo-context': 0, 'title-boost': 3 });
const TOP_K = 10;

const settings = {
  fields: ['title', 'content', 'path'],
  searchOptions: { boost: { title: opt['title-boost'], path: 1.5 }, fuzzy: 0.2, prefix: true },
};

function index(units) {
  const ms = new MiniSearch({ fields: settings.fields, storeFields: [], searchOptions: settings.searchOptions });
  ms.addAll(units.map((u, i) => ({ id: i, title: u.title, path: u.path.replace(/\.md$/, ''), content: searchText(u) })));
  return ms;
}

function timed(fn) {
  const t = process.hrtime.bigint();
  const v = fn();
  return [v, Number(process.hrtime.bigint() - t) / 1e6];
}

const summary = (lat) => ({ n: lat.length, p50: percentile(lat, 50), p95: percentile(lat, 95) });

function runLocomo(path) {
  const { convs } = loadLocomo(path);
  const rankings = {};
  const lat = [];
  const build = { trees: 0, entries: 0, bytes: 0, ms: 0 };
  for (const c of convs) {
    const units = locomoUnits(c, opt['locomo-context']);
    const [ms, bms] = timed(() => index(units));
    build.trees++; build.entries += units.length; build.ms += bms;
    build.bytes += units.reduce((a, u) => a + unitBytes(u), 0);
    for (const q of c.questions) {
      const [res, qms] = timed(() => ms.search(q.text));
      lat.push(qms);
      rankings[q.key] = res.slice(0, TOP_K).map((r) => units[r.id].id);
    }
    log(`minisearch LoCoMo ${c.sampleId}: ${units.length} docs, ${c.questions.length} questions`);
  }
  return { build, latencyMs: { search: lat }, latency: summary(lat), metrics: locomoMetrics(convs, rankings), rankings };
}

function runLME(path) {
  const { questions } = loadLongMemEval(path);
  const rankings = {};
  const lat = [];
  const build = { trees: 0, entries: 0, bytes: 0, ms: 0 };
  questions.forEach((q, i) => {
    const units = lmeUnits(q, opt['lme-turns']);
    const [ms, bms] = timed(() => index(units));
    build.trees++; build.entries += units.length; build.ms += bms;
    build.bytes += units.reduce((a, u) => a + unitBytes(u), 0);
    const [res, qms] = timed(() => ms.search(q.question));
    lat.push(qms);
    rankings[q.question_id] = dedupe(res.map((r) => units[r.id].session)).slice(0, TOP_K);
    if ((i + 1) % 20 === 0 || i + 1 === questions.length) log(`minisearch LongMemEval ${i + 1}/${questions.length}`);
  });
  return { build, latencyMs: { search: lat }, latency: summary(lat), metrics: lmeMetrics(questions, rankings), rankings };
}

let version = '';
try {
  const main = createRequire(import.meta.url).resolve('minisearch');
  const pkg = main.slice(0, main.lastIndexOf('/node_modules/minisearch/') + '/node_modules/minisearch/'.length) + 'package.json';
  version = JSON.parse(readFileSync(pkg, 'utf8')).version;
} catch { /* unknown */ }

const out = { system: 'minisearch', version, node: process.version, settings };
if (opt.locomo) out.locomo = runLocomo(opt.locomo);
if (opt.longmemeval) out.longmemeval = runLME(opt.longmemeval);
if (!opt.rankings) {
  for (const d of [out.locomo, out.longmemeval]) if (d) { delete d.rankings; delete d.latencyMs; }
}
process.stdout.write(JSON.stringify(out, null, opt.rankings ? 0 : 2) + '\n');
