// The Node runner of the conformance fixture (DESIGN §8): the same
// testdata/fixture.json the Go runners use (conformance_test.go), sent
// request by request through the JS package's raw call path to
// dist/arbor.wasm over a real folder, must give exactly the responses and
// files of testdata/expected.json. Mirrors conformance.go: Requests,
// Normalize, DigestDir, CopyTree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startEngine, nodeFs } from 'arbor-memory';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const wasmPath = path.join(repoRoot, 'dist/arbor.wasm');
const skip = fs.existsSync(wasmPath) ? false : 'dist/arbor.wasm is missing: run ./build.sh wasm';

/** testdata/fixture.json: { tree, open, steps: [{ method, params? }] }. */
function loadFixture() {
  return JSON.parse(fs.readFileSync(path.join(here, 'testdata/fixture.json'), 'utf8'));
}

/**
 * The requests a host sends, as Fixture.Requests builds them: id 0 is
 * "open" with the fixture's open params (null when it has none), then ids
 * 1..n for the steps, `params` left out when a step has none. Keys come in
 * Go's order (id, method, params: sorted) and strings are escaped like
 * Go's encoding/json (<, >, &, U+2028, U+2029 as \u escapes), so the bytes
 * are Go's too as long as the fixture's numbers are plain integers.
 */
function requests(fixture) {
  const goJSON = (v) =>
    JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const out = [goJSON({ id: 0, method: 'open', params: fixture.open ?? null })];
  fixture.steps.forEach((s, i) => {
    const req = { id: i + 1, method: s.method };
    if (s.params !== undefined) req.params = s.params;
    out.push(goJSON(req));
  });
  return out;
}

/** Normalize: the response parsed, with every `tookMs` key removed at any depth. */
function normalize(text) {
  let v;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`conformance: response is not JSON: ${err.message}: ${text}`);
  }
  return strip(v);
}

function strip(v) {
  if (Array.isArray(v)) return v.map(strip);
  if (v !== null && typeof v === 'object') {
    delete v.tookMs;
    for (const k of Object.keys(v)) v[k] = strip(v[k]);
  }
  return v;
}

/** Digest: the first 8 bytes of the SHA-256, in hex. */
const digest = (bytes) => createHash('sha256').update(bytes).digest().subarray(0, 8).toString('hex');

/**
 * Digested: whether a file belongs in the digest. The persisted search index
 * (.arbor/index/) does not: its segment layout follows bluge's background
 * merges, so its bytes differ between runs and hosts (see Digested in
 * conformance.go).
 */
const digested = (rel) => !rel.startsWith('.arbor/index/');

/** DigestDir: every digested file below dir, keyed by its slash-separated relative path. */
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
  const want = JSON.parse(fs.readFileSync(path.join(here, 'testdata/expected.json'), 'utf8'));
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

  // Like compare in conformance_test.go: every difference is reported, not just the first.
  const problems = [];
  for (let i = 0; i < Math.max(want.responses.length, got.length); i++) {
    if (i >= want.responses.length || i >= got.length) {
      problems.push(`node: ${got.length} responses, want ${want.responses.length}`);
      break;
    }
    if (!isDeepStrictEqual(got[i], want.responses[i])) {
      problems.push(`node: response ${i} differs\n got: ${show(got[i])}\nwant: ${show(want.responses[i])}`);
    }
  }
  for (const k of Object.keys(want.files).sort()) {
    if (files[k] !== want.files[k]) problems.push(`node: file ${k}: digest ${show(files[k] ?? '')}, want ${show(want.files[k])}`);
  }
  for (const k of Object.keys(files).sort()) {
    if (!(k in want.files)) problems.push(`node: unexpected file ${k}`);
  }
  assert.ok(problems.length === 0, problems.join('\n'));
});

/** JSON with object keys sorted, as Go prints a map: both sides of a difference line up. */
function show(v) {
  return JSON.stringify(v, (_, x) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]]))
      : x,
  );
}
