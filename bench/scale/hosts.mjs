#!/usr/bin/env node
// The JavaScript hosts of bench/scale (main.go runs this once per host and
// tree, each in a process of its own): the engine module in Node on the
// folder (bindings/js, nodeFs), the same module in headless Chromium on an
// in-memory copy of the tree, and MiniSearch in Node on the same entries.
// Each does what main.go's script says — build, persist, reopen, ask every
// question — and prints the figures as JSON on stdout (main.go's hostResult).
//
//   node bench/scale/hosts.mjs --host node|chromium|minisearch --dir TREE --script FILE [--wasm dist/arbor.wasm]

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    host: { type: 'string' },
    dir: { type: 'string' },
    script: { type: 'string' },
    wasm: { type: 'string', default: 'dist/arbor.wasm' },
  },
});
const script = JSON.parse(fs.readFileSync(opt.script, 'utf8'));
const MiB = 1 << 20;

// The tree's entry files (not .arbor), as [relative path, text], one at a
// time: a million entries are never listed at once.
function* entries(dir, rel = '') {
  for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (d.name.startsWith('.')) continue;
    const p = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) yield* entries(dir, p);
    else if (d.name.endsWith('.md')) yield [p, fs.readFileSync(path.join(dir, p), 'utf8')];
  }
}

// runScript is the script on one engine: `request` sends a raw request and
// resolves with its response text; `now` reads a clock in ms, `cpu` the
// process's processor time in ms (null where it cannot be read); `linear`
// reads the module's memory. It is serialized into the Chromium page, so it
// uses nothing from this module.
async function runScript(script, request, now, cpu, linear) {
  let id = 0;
  const call = async (method, params) => {
    const t = now();
    const out = JSON.parse(await request(JSON.stringify({ id: ++id, method, params })));
    const ms = now() - t;
    if (out.error) throw new Error(`${method}: ${out.error.code}: ${out.error.message}`);
    return { result: out.result, ms };
  };
  const open = { fixedTime: script.fixedTime };
  const r = { queryMs: [], results: [] };
  const c = cpu();
  r.buildMs = (await call('open', open)).ms;
  if (c !== null) r.buildCpuMs = cpu() - c;
  r.persistMs = (await call('close')).ms;
  r.linearMiB = linear();
  const oc = cpu();
  r.openMs = (await call('open', open)).ms;
  if (oc !== null) r.openCpuMs = cpu() - oc;
  const qc = cpu();
  for (const q of script.queries) {
    const { result, ms } = await call('query', { query: q, limit: script.limit });
    r.queryMs.push(ms);
    r.results.push(result.results.map((h) => h.path));
  }
  if (qc !== null) r.queryCpuMs = (cpu() - qc) / script.queries.length;
  await call('close');
  return r;
}

// The bindings keep the instance to themselves; the benchmark reads its
// memory by watching WebAssembly.instantiate (in Node and in the page).
function watchInstances() {
  const seen = [];
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async (...args) => {
    const out = await instantiate.apply(WebAssembly, args);
    seen.push(out.instance ?? out);
    return out;
  };
  return () => {
    const mem = seen.at(-1)?.exports.memory;
    return mem ? mem.buffer.byteLength / (1 << 20) : 0;
  };
}

async function node() {
  const { startEngine, compileArbor, nodeFs } = await import('../../bindings/js/index.node.js');
  const linear = watchInstances();
  const module = await compileArbor(opt.wasm);
  const eng = await startEngine({ storage: nodeFs(opt.dir), wasm: module, onLog: () => {} });
  const now = () => performance.now();
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  try {
    return { ...(await runScript(script, (req) => eng.request(req), now, cpu, linear)), version: `Node ${process.version}` };
  } finally {
    await eng.dispose();
  }
}

async function chromium() {
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../../web-demo/serve.mjs');
  // The tree as one file the page fetches: "path\0text\0" repeated.
  const bundle = path.join(path.dirname(opt.script), 'bundle.bin');
  try {
    const out = fs.openSync(bundle, 'w');
    try {
      for (const [p, text] of entries(opt.dir)) fs.writeSync(out, `${p}\0${text}\0`);
    } finally {
      fs.closeSync(out);
    }
    return await inChromium(chromium, serve, bundle);
  } finally {
    fs.rmSync(bundle, { force: true });
  }
}

async function inChromium(chromium, serve, bundle) {
  const server = await serve({ port: 0 });
  // The bundle has a server of its own: through Playwright (route.fulfill)
  // a body travels as one DevTools message, which Chromium caps at
  // 100 MiB ("Too large read data is pending"; the 100k tree's is 111 MiB),
  // and closes the connection, the page and the browser with it.
  const bundleServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'access-control-allow-origin': '*' });
    fs.createReadStream(bundle).pipe(res);
  });
  await new Promise((resolve) => bundleServer.listen(0, '127.0.0.1', () => resolve(undefined)));
  const addr = /** @type {import('node:net').AddressInfo} */ (bundleServer.address());
  const bundleURL = `http://127.0.0.1:${addr.port}/bundle.bin`;
  const browser = await chromium.launch({ executablePath: process.env.ARBOR_CHROMIUM ?? '/usr/bin/chromium' });
  try {
    const page = await browser.newPage();
    // What the page says, and a crash of its renderer, reach stderr: the
    // report's error cell is its end.
    page.on('console', (m) => process.stderr.write(`page ${m.type()}: ${m.text()}\n`));
    page.on('crash', () => process.stderr.write('page crashed\n'));
    await page.goto(`${server.url}style.css`);
    const r = await page.evaluate(
      async ({ script, run, watch, bundleURL }) => {
        const linear = new Function(`return (${watch})`)()();
        const runScript = new Function(`return (${run})`)();
        const { startEngine, memory } = await import('/bindings/js/index.js');
        // The bundle's text is garbage once the storage holds its bytes.
        const storage = await (async () => {
          const text = await (await fetch(bundleURL)).text();
          const files = {};
          const parts = text.split('\0');
          for (let i = 0; i + 1 < parts.length; i += 2) files[parts[i]] = parts[i + 1];
          return memory(files);
        })();
        // The files' times are when the storage was filled: an open
        // within 2 s of them cannot trust them (racy git; docs/design.md),
        // and the reopen would read them all again. A tree on disk is older.
        await new Promise((resolve) => setTimeout(resolve, 2100));
        const eng = await startEngine({ storage, wasm: '/dist/arbor.wasm', onLog: (level, msg) => console.log(`${level}: ${msg}`) });
        try {
          return await runScript(script, (req) => eng.request(req), () => performance.now(), () => null, linear);
        } finally {
          await eng.dispose();
        }
      },
      { script, run: runScript.toString(), watch: watchInstances.toString(), bundleURL },
    );
    return { ...r, version: `Chromium ${browser.version()}` };
  } finally {
    await browser.close();
    await server.close();
    bundleServer.close();
  }
}

// MiniSearch with bench/retrieval's settings (minisearch.mjs): fields
// title, content and path, title boosted 3 and path 1.5, fuzzy 0.2, prefix.
async function minisearch() {
  const { default: MiniSearch } = await import('minisearch');
  const settings = { fields: ['title', 'content', 'path'], storeFields: [], searchOptions: { boost: { title: 3, path: 1.5 }, fuzzy: 0.2, prefix: true } };
  const paths = [];
  const t = performance.now();
  const ms = new MiniSearch(settings);
  for (const [p, text] of entries(opt.dir)) {
    const title = /^title: (.*)$/m.exec(text)?.[1] ?? '';
    const body = text.slice(text.indexOf('\n---\n') + 5);
    ms.add({ id: paths.length, title, path: p.replace(/\.md$/, ''), content: body });
    paths.push(p);
  }
  const buildMs = performance.now() - t;
  const heapMiB = process.memoryUsage().heapUsed / MiB;
  const queryMs = [];
  for (const q of script.queries) {
    const t = performance.now();
    ms.search(q);
    queryMs.push(performance.now() - t);
  }
  const { version } = JSON.parse(fs.readFileSync(new URL('../../node_modules/minisearch/package.json', import.meta.url), 'utf8'));
  return { buildMs, persistMs: 0, openMs: 0, heapMiB, queryMs, version: `MiniSearch ${version}, Node ${process.version}` };
}

const hosts = { node, chromium, minisearch };
if (!hosts[opt.host]) throw new Error(`--host ${opt.host}: want ${Object.keys(hosts).join(', ')}`);
try {
  process.stdout.write(JSON.stringify(await hosts[opt.host]()) + '\n');
} catch (err) {
  // One line for the report's table; the stack says nothing about scale.
  process.stderr.write(`${opt.host}: ${String(err?.message ?? err).split("\n")[0]}\n`);
  process.exit(1);
}
