// A tiny static server for the web demo (./build.sh demo-web), with no
// dependencies: the demo's own files at /, the JS package at
// /bindings/js/, the engine at /dist/arbor.wasm and the sample notes
// (examples/notes, bundled as one JSON) at /sample-notes.json, so the
// page, its worker and its service worker share one origin and one scope.
//
//   node web-demo/serve.mjs [port]     (default 8080; 0 picks a free one)

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
};

/** Where the sample notes come from: the tree the CLI's demo and the conformance fixture use. */
const SAMPLE_ROOT = path.join(repo, 'examples/notes');

/**
 * The sample notes the demo's "Load sample notes" imports: every markdown
 * file of examples/notes with its path in the tree, sorted, as the JSON of
 * `{files: [{path, data}]}`. Read at each request, so it is always the
 * tree as it is in the repository, and one request fetches it whole.
 *
 * @returns {string}
 */
export function sampleNotes() {
  /** @type {{ path: string, data: string }[]} */
  const files = [];
  /** @param {string} rel */
  const walk = (rel) => {
    const entries = fs.readdirSync(path.join(SAMPLE_ROOT, rel), { withFileTypes: true });
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const p = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) files.push({ path: p, data: fs.readFileSync(path.join(SAMPLE_ROOT, p), 'utf8') });
    }
  };
  walk('');
  return JSON.stringify({ files });
}

/** The file a URL path names, or null when it is outside what is served. */
function locate(urlPath) {
  let p;
  try {
    p = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (p.includes('\0') || p.split('/').some((s) => s === '..' || s.startsWith('.'))) return null;
  if (p === '/dist/arbor.wasm') return path.join(repo, 'dist/arbor.wasm');
  if (p.startsWith('/bindings/js/')) {
    if (p.startsWith('/bindings/js/test/')) return null;
    return path.join(repo, p);
  }
  if (p === '/') p = '/index.html';
  return path.join(here, p);
}

/**
 * Starts the server on 127.0.0.1.
 *
 * @param {{ port?: number }} [options]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export function serve({ port = 8080 } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/sample-notes.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      const body = Buffer.from(sampleNotes());
      res.writeHead(200, { 'content-type': types['.json'], 'cache-control': 'no-cache', 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const file = req.method === 'GET' || req.method === 'HEAD' ? locate(url.pathname) : null;
    let st;
    try {
      st = file && fs.statSync(file);
    } catch {
      st = null;
    }
    if (!st?.isFile()) {
      res.writeHead(file ? 404 : 400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(file ? 'not found\n' : 'bad request\n');
      return;
    }
    const etag = `"${st.size.toString(16)}-${Math.trunc(st.mtimeMs).toString(16)}"`;
    // Always revalidated: the service worker, not the HTTP cache, keeps
    // the app for offline use, and a rebuilt wasm is picked up at once.
    const headers = { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache', etag };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': st.size });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: actual } = server.address();
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = process.argv[2] === undefined ? 8080 : Number(process.argv[2]);
  if (!fs.existsSync(path.join(repo, 'dist/arbor.wasm'))) console.error('web-demo: dist/arbor.wasm is missing; run ./build.sh wasm');
  const { url } = await serve({ port });
  console.log(`Arbor web demo: ${url}  (Ctrl-C stops it)`);
}
