#!/usr/bin/env node
// The request script bench/wasm replays on every host: the raw ABI requests
// (docs/ABI.md §3) of a few sessions of use, each step tagged with the phase
// it is reported under. The LongMemEval trees are laid out as
// bench/retrieval lays them out (corpus.mjs), so the figures compare with
// bench/retrieval/REPORT.md; the demo tree is examples/notes with the
// README demo's questions.
//
//   node bench/wasm/workload.mjs --longmemeval FILE [--trees 3] [--queries 10] > script.json
//
// A tree is {group, name, seed, steps}: trees of a group are reported
// together; seed is a folder copied into the memory
// root before the first step ("" starts empty); a step is {phase, request},
// or {restart: true}, which replaces the engine instance (a new process, as
// for every command of the CLI).

import { readFileSync } from 'node:fs';
import { args, loadLongMemEval, lmeUnits, operation, bySession, parseLMEDate } from '../retrieval/corpus.mjs';

const opt = args(process.argv.slice(2), { longmemeval: '', trees: 3, queries: 10 });

let nextID = 0;
const req = (method, params) => ({ id: ++nextID, method, params });
const rfc3339 = (d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

const demoTime = '2026-06-01T12:00:00Z'; // any fixed time: every host must answer alike

// The README demo (examples/demo.sh, read here so the two stay in step):
// three CLI commands on a copy of examples/notes, each a new process that
// opens the root, does one thing and closes it.
function demoTree() {
  const sh = readFileSync('examples/demo.sh', 'utf8');
  const heredoc = (tag) => {
    const m = new RegExp(`<<'${tag}'[^\\n]*\\n([\\s\\S]*?)\\n${tag}\\n`).exec(sh);
    if (!m) throw new Error(`examples/demo.sh: no ${tag} here-document`);
    return m[1];
  };
  const operations = JSON.parse(heredoc('JSON'));
  const questions = heredoc('QUESTIONS').split('\n').filter((q) => q.trim());
  const open = (phase) => ({ phase, request: req('open', { fixedTime: demoTime }) });
  const steps = [
    open('open, cold (build the index)'),
    { phase: 'stats', request: req('stats') },
    { phase: 'close (persist)', request: req('close') },
    { restart: true },
    open('open, persisted index'),
    { phase: 'curate (3 operations)', request: req('curate', { operations }) },
    { phase: 'close (persist)', request: req('close') },
    { restart: true },
    open('open, persisted index'),
  ];
  questions.forEach((q, i) => {
    steps.push({ phase: i === 0 ? 'first query after open' : 'query after open', request: req('query', { query: q }) });
  });
  steps.push({ phase: 'close (persist)', request: req('close') });
  return { group: 'README demo (examples/demo.sh on examples/notes)', name: 'demo', seed: 'examples/notes', steps };
}

// One LongMemEval question's haystack: curated one session per call, then
// questions; closed, reopened in a new instance, and asked other questions
// (the query cache does not outlive the instance, but different questions
// keep the comparison honest).
function lmeTree(q, asked, askedAfter) {
  const date = parseLMEDate(q.question_date) || new Date(Date.UTC(2024, 0, 1));
  const open = () => req('open', { fixedTime: rfc3339(date) });
  const steps = [{ phase: 'open, empty', request: open() }];
  for (const group of bySession(lmeUnits(q))) {
    steps.push({ phase: 'curate (one session)', request: req('curate', { operations: group.map(operation) }) });
  }
  asked.forEach((text, i) => {
    steps.push({ phase: i === 0 ? 'first query after build' : 'query after build', request: req('query', { query: text, limit: 10 }) });
  });
  steps.push({ phase: 'close (persist)', request: req('close') });
  steps.push({ restart: true });
  steps.push({ phase: 'open, persisted index', request: open() });
  askedAfter.forEach((text, i) => {
    steps.push({ phase: i === 0 ? 'first query after open' : 'query after open', request: req('query', { query: text, limit: 10 }) });
  });
  steps.push({ phase: 'close (persist)', request: req('close') });
  return { group: 'LongMemEval-S haystacks', name: q.question_id, seed: '', steps };
}

const trees = [demoTree()];
if (opt.longmemeval) {
  const { questions } = loadLongMemEval(opt.longmemeval);
  const need = opt.trees + 2 * opt.queries;
  if (questions.length < need) throw new Error(`${opt.longmemeval}: ${questions.length} questions, need ${need}`);
  // Each tree is asked its own question first, then questions of other
  // haystacks, which are never built: realistic queries, partly off-topic.
  const pool = questions.slice(opt.trees).map((q) => q.question);
  for (const q of questions.slice(0, opt.trees)) {
    const asked = [q.question, ...pool.slice(0, opt.queries - 1)];
    const askedAfter = pool.slice(opt.queries - 1, 2 * opt.queries - 1);
    trees.push(lmeTree(q, asked, askedAfter));
  }
}
process.stdout.write(JSON.stringify({ trees }) + '\n');
