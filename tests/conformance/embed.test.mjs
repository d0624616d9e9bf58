// The embeddings fixture through Node (embed_test.go runs it natively and
// under wazero): the JS package's Node embedder against the scripted
// server, which answers the same hashed vectors as host.HashEmbedder, must
// give exactly the responses and files of testdata/embed-expected.json.
//
// The engine's embed import is synchronous: while it waits, this thread
// runs nothing else, so the server runs in a worker thread of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startEngine, openMemory, nodeFs, openaiEmbeddings } from 'arbor-memory';
import { openMemoryInWorker } from 'arbor-memory/worker';
import { compare, digest, digested, loadExpected, loadFixture, normalize, requests } from './fixture.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const wasmPath = path.join(repoRoot, 'dist/arbor.wasm');
const skip = fs.existsSync(wasmPath) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

/** Starts the scripted server in a worker thread; pushEmbed scripts its embedding answers. */
async function serverThread(t) {
  const serverURL = pathToFileURL(path.join(repoRoot, 'tests/llm/scripted-server.mjs')).href;
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     import(${JSON.stringify(serverURL)}).then(async ({ startScriptedServer }) => {
       const srv = await startScriptedServer([]);
       parentPort.on('message', (m) => { srv.pushEmbed(...m.embed); parentPort.postMessage({ pushed: true }); });
       parentPort.postMessage({ url: srv.url });
     });`,
    { eval: true },
  );
  t.after(() => worker.terminate());
  const url = await new Promise((resolve) => worker.once('message', (m) => resolve(m.url)));
  return {
    url,
    pushEmbed: (...steps) =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage({ embed: steps });
      }),
  };
}

function digestDir(dir) {
  const out = {};
  const walk = (abs, rel) => {
    for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
      const a = path.join(abs, d.name);
      const r = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) walk(a, r);
      else if (digested(r)) out[r] = digest(fs.readFileSync(a));
    }
  };
  walk(dir, '');
  return out;
}

function treeCopy(t, fixture) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-embed-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(repoRoot, fixture.tree), dir, { recursive: true });
  return dir;
}

test('embeddings: the fixture through Node gives the golden responses and files', { skip }, async (t) => {
  const fixture = loadFixture('embed-fixture.json');
  const srv = await serverThread(t);
  const dir = treeCopy(t, fixture);
  const embeddings = openaiEmbeddings({ baseURL: `${srv.url}/v1`, model: 'hashed-bow' });
  t.after(() => embeddings.close?.());
  const engine = await startEngine({ storage: nodeFs(dir), wasm: wasmPath, embeddings });
  const got = [];
  try {
    for (const req of requests(fixture)) got.push(normalize(await engine.request(req)));
  } finally {
    await engine.dispose();
  }
  const problems = compare('node', loadExpected('embed-expected.json'), got, digestDir(dir));
  assert.ok(problems.length === 0, problems.join('\n'));
});

test('embeddings: a failing endpoint is a warning and BM25 alone, never a failed call', { skip }, async (t) => {
  const fixture = loadFixture('embed-fixture.json');
  const question = 'who is paged when a payment fails';
  const plain = await openMemory({ storage: nodeFs(treeCopy(t, fixture)), wasm: wasmPath, fixedTime: '2026-03-01T00:00:00Z' });
  const want = await plain.query(question);
  await plain.close();

  const srv = await serverThread(t);
  const warnings = [];
  const embeddings = openaiEmbeddings({ baseURL: `${srv.url}/v1`, model: 'hashed-bow', maxRetries: 0 });
  t.after(() => embeddings.close?.());
  const mem = await openMemory({
    storage: nodeFs(treeCopy(t, fixture)),
    wasm: wasmPath,
    fixedTime: '2026-03-01T00:00:00Z',
    embeddings,
    onLog: (level, msg) => level === 'warn' && warnings.push(msg),
  });
  for (const [step, warning] of [
    [{ raw: '<html>bad gateway</html>' }, 'the answer could not be decoded'],
    [{ dims: 32 }, 'a vector of 32 dimensions where the stored ones have 64'],
    [{ status: 500, message: 'model not loaded' }, 'HTTP 500: model not loaded'],
  ]) {
    await srv.pushEmbed(step);
    const got = await mem.query(question);
    assert.match(got.reason, /embeddings: the question could not be embedded .*; ranked by BM25 alone/);
    assert.deepEqual(got.results.map((h) => h.path), want.results.map((h) => h.path));
    assert.ok(warnings.some((w) => w.includes(warning)), `no warning "${warning}" in ${JSON.stringify(warnings)}`);
  }
  // A write still succeeds while the model fails, and is found by BM25.
  await srv.pushEmbed({ status: 500 }, { status: 500 });
  const res = await mem.curate([{ type: 'ADD', path: 'ops/notes', title: 'Backups', content: { narrative: 'Backups run nightly at 02:00.' }, reason: 'test' }]);
  assert.equal(res.summary.added, 1);
  const found = await mem.query('when do backups run');
  assert.equal(found.results[0].path, 'ops/notes/backups.md');
  await mem.close();
});

// The steps of the fixture before its first write, as openMemoryInWorker
// answers them: the worker makes its embedder from the options it is given
// (functions cannot cross to it) and must answer as the golden says.
test('embeddings: openMemoryInWorker makes its embedder from options and gives the golden answers', { skip }, async (t) => {
  const fixture = loadFixture('embed-fixture.json');
  const want = loadExpected('embed-expected.json');
  const srv = await serverThread(t);
  const mem = await openMemoryInWorker({
    storage: { kind: 'nodeFs', dir: treeCopy(t, fixture) },
    wasm: wasmPath,
    ...fixture.open,
    embeddings: { baseURL: `${srv.url}/v1`, model: 'hashed-bow' },
  });
  t.after(() => mem.close());
  assert.deepEqual(normalize(JSON.stringify({ id: 0, result: mem.opened })), want.responses[0]);
  const reads = fixture.steps.slice(0, fixture.steps.findIndex((s) => s.method === 'curate'));
  assert.ok(reads.length >= 3, 'the fixture starts with queries');
  for (const [i, step] of reads.entries()) {
    const result = await mem.call(step.method, step.params);
    assert.deepEqual(normalize(JSON.stringify({ id: i + 1, result })), want.responses[i + 1], `step ${i + 1}: ${step.method}`);
  }
  const embedder = openaiEmbeddings({ baseURL: `${srv.url}/v1`, model: 'hashed-bow' });
  t.after(() => embedder.close?.());
  await assert.rejects(openMemoryInWorker({ wasm: wasmPath, embeddings: embedder }), { code: 'invalid_params', message: /the options of openaiEmbeddings/ });
});
