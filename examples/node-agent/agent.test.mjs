// Runs examples/node-agent/agent.mjs as a user would, so the example and
// its README cannot drift from the package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { skipWithoutWasm, tmpdir } from '../../bindings/js/test/_engine.mjs';
import { run } from './agent.mjs';

const script = fileURLToPath(new URL('./agent.mjs', import.meta.url));

test('the node-agent example runs and leaves a tree of markdown', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const { stdout } = await promisify(execFile)(process.execPath, [script, dir]);
  const lines = stdout.trim().split('\n');
  assert.equal(lines[0], `opened ${dir}: 0 entries`);
  assert.equal(lines[1], '✓ UPSERT projects/checkout/payment_provider_decision.md (added new)');
  assert.equal(lines[2], '✓ UPSERT people/team/maria_keller.md (added new)');
  assert.match(lines[3], /^query → tier 2 \(direct\) in \d+\.\d ms$/);
  assert.match(lines[4], /^answer: Payment provider decision — Checkout moves from Stripe to Adyen in Q3/);
  assert.equal(lines[5], 'read projects/checkout/payment_provider_decision.md: "Payment provider decision", backlinks: people/team/maria_keller.md');
  assert.equal(lines[6], '  ← Maria Keller: Payments lead; owns the provider migration; prefers written proposals over calls.');
  assert.equal(lines[7], 'refused: invalid_path');
  assert.equal(lines[8], 'tree: people/ (team); projects/ (checkout)');
  const md = fs.readFileSync(path.join(dir, 'projects/checkout/payment_provider_decision.md'), 'utf8');
  assert.match(md, /^---\ntitle: Payment provider decision\n/);
  assert.match(md, /- \*\*checkout provider\*\*: Adyen from Q3 \[decision\]/);
  assert.ok(fs.existsSync(path.join(dir, '.arbor/state.json')), 'close wrote the lifecycle signals');
});

test('run again on the same folder: the second UPSERT updates, the answer comes from the same entry', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  await run(dir, () => {});
  const said = [];
  await run(dir, (line) => said.push(line));
  assert.equal(said[0], `opened ${dir}: 2 entries`);
  assert.match(said[1], /^✓ UPSERT projects\/checkout\/payment_provider_decision\.md \(updated existing/);
  assert.match(said[4], /^answer: Payment provider decision/);
});
