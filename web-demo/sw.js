// The demo's offline cache: everything the app needs is stored when the
// service worker installs; requests go to the network first (so a rebuilt
// engine or page shows up at once) and fall back to the cache offline.

const CACHE = 'arbor-notes-v4';
const APP = [
  './',
  'index.html',
  'style.css',
  'app.js',
  'model.js',
  'bindings/js/index.js',
  'bindings/js/abi.js',
  'bindings/js/bytes.js',
  'bindings/js/error.js',
  'bindings/js/files.js',
  'bindings/js/folder.js',
  'bindings/js/embed/format.js',
  'bindings/js/embed/index.js',
  'bindings/js/llm/anthropic.js',
  'bindings/js/llm/client.js',
  'bindings/js/llm/drive.js',
  'bindings/js/llm/error.js',
  'bindings/js/llm/index.js',
  'bindings/js/llm/openai.js',
  'bindings/js/load.js',
  'bindings/js/methods.js',
  'bindings/js/paths.js',
  'bindings/js/sandbox.js',
  'bindings/js/wasi.js',
  'bindings/js/worker.js',
  'bindings/js/worker-entry.js',
  'bindings/js/storage/errors.js',
  'bindings/js/storage/indexeddb.js',
  'bindings/js/storage/memory.js',
  'dist/arbor.wasm',
  'sample-notes.json',
];

self.addEventListener('install', (ev) => {
  ev.waitUntil(caches.open(CACHE).then((c) => c.addAll(APP)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (ev) => {
  ev.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (ev) => {
  const req = ev.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== location.origin) return;
  ev.respondWith(
    fetch(req)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          ev.waitUntil(caches.open(CACHE).then((c) => c.put(req, copy)));
        }
        return res;
      })
      .catch(async () => (await caches.match(req, { ignoreSearch: true })) ?? Response.error()),
  );
});
