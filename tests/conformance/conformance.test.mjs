// The Node runner of the conformance fixture (docs/design.md, Quality bars): the same
// testdata/fixture.json the Go runners use (conformance_test.go), sent
// request by request through the JS package's raw call path to
// dist/arbor.wasm over a real folder, must give exactly the responses and
// files of testdata/expected.json. Mirrors conformance.go: Requests,
// Normalize, DigestDir, CopyTree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEngine, nodeFs } from 'arbor-memory';
import { compare, digest, loadExpected, loadFixture, normalize, requests } from './fixture.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const wasmPath = path.join(repoRoot, 'dist/arbor.wasm');
const skip = fs.existsSync(wasmPath) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

/** DigestDir: every file below dir, keyed by its slash-separated relative path. */
function digestDir(dir) {
  const out = {};
  const walk = (abs, rel) => {
    for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
      const a = path.join(abs, d.name);
      const r = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) walk(a, r);
      else out[r] = digest(fs.readFileSync(a));
    }
  };
  walk(dir, '');
  return out;
}

/** CopyTree: the fixture's tree, folders and files, into dst. */
function copyTree(src, dst) {
  for (const d of fs.readdirSync(src, { withFileTypes: true })) {
    const from = path.join(src, d.name);
    const to = path.join(dst, d.name);
    if (d.isDirectory()) {
      fs.mkdirSync(to, { recursive: true });
      copyTree(from, to);
    } else if (d.isFile()) {
      fs.writeFileSync(to, fs.readFileSync(from));
    } else {
      throw new Error(`conformance: ${from}: only folders and files are copied`);
    }
  }
}

test('conformance: the fixture through Node gives the golden responses and files', { skip }, async (t) => {
  const fixture = loadFixture();
  const want = loadExpected();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-conformance-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  copyTree(path.join(repoRoot, fixture.tree), dir);

  const engine = await startEngine({ storage: nodeFs(dir), wasm: wasmPath });
  const got = [];
  try {
    for (const req of requests(fixture)) got.push(normalize(await engine.request(req)));
  } finally {
    await engine.dispose();
  }
  const files = digestDir(dir);

  const problems = compare('node', want, got, files);
  assert.ok(problems.length === 0, problems.join('\n'));
});

