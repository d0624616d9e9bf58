// The conformance fixture's rules shared by its JS runners (Node in
// conformance.test.mjs, Chromium in tests/browser): the requests a host
// sends, how responses are normalized, how files are digested, and how a
// run is compared with testdata/expected.json. Mirrors conformance.go.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** testdata/fixture.json: { tree, open, steps: [{ method, params? }] }. */
export function loadFixture(name = 'fixture.json') {
  return JSON.parse(fs.readFileSync(path.join(here, 'testdata', name), 'utf8'));
}

/**
 * The requests a host sends, as Fixture.Requests builds them: id 0 is
 * "open" with the fixture's open params (null when it has none), then ids
 * 1..n for the steps, `params` left out when a step has none. Keys come in
 * Go's order (id, method, params: sorted) and strings are escaped like
 * Go's encoding/json (<, >, &, U+2028, U+2029 as \u escapes), so the bytes
 * are Go's too as long as the fixture's numbers are plain integers.
 */
export function requests(fixture) {
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
export function normalize(text) {
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
export const digest = (bytes) => createHash('sha256').update(bytes).digest().subarray(0, 8).toString('hex');

/**
 * Digested: whether a file belongs in the digest. The persisted search index
 * (.arbor/index/) does not: its segment layout follows bluge's background
 * merges, so its bytes differ between runs and hosts; nor does the persisted
 * catalog, which holds the modification times each storage sets (see
 * Digested in conformance.go).
 */
export const digested = (rel) =>
  !rel.startsWith('.arbor/index/') && rel !== '.arbor/catalog.bin' && rel !== '.arbor/catalog-delta.bin';

/** testdata/expected.json: { responses, files }. */
export function loadExpected(name = 'expected.json') {
  return JSON.parse(fs.readFileSync(path.join(here, 'testdata', name), 'utf8'));
}

/**
 * Like compare in conformance_test.go: every difference between a run
 * (normalized responses, file digests) and the golden, not just the first.
 *
 * @returns {string[]} the problems, empty when the run matches
 */
export function compare(label, want, got, allFiles) {
  const problems = [];
  const files = Object.fromEntries(Object.entries(allFiles).filter(([k]) => digested(k)));
  for (let i = 0; i < Math.max(want.responses.length, got.length); i++) {
    if (i >= want.responses.length || i >= got.length) {
      problems.push(`${label}: ${got.length} responses, want ${want.responses.length}`);
      break;
    }
    if (!isDeepStrictEqual(got[i], want.responses[i])) {
      problems.push(`${label}: response ${i} differs\n got: ${show(got[i])}\nwant: ${show(want.responses[i])}`);
    }
  }
  for (const k of Object.keys(want.files).sort()) {
    if (files[k] !== want.files[k]) problems.push(`${label}: file ${k}: digest ${show(files[k] ?? '')}, want ${show(want.files[k])}`);
  }
  for (const k of Object.keys(files).sort()) {
    if (!(k in want.files)) problems.push(`${label}: unexpected file ${k}`);
  }
  return problems;
}

/** JSON with object keys sorted, as Go prints a map: both sides of a difference line up. */
function show(v) {
  return JSON.stringify(v, (_, x) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]]))
      : x,
  );
}
