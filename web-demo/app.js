// The Arbor notes demo: the engine runs in a Web Worker on an IndexedDB
// tree; this file only draws the page and forwards what the user does
// (model.js holds the model settings and asking a question).

import { openMemoryInWorker } from './bindings/js/worker.js';
import { filesFromDirectory, filesFromFileList, filesToDirectory, zipFiles } from './bindings/js/folder.js';
import { setupModel } from './model.js';

const DB_NAME = 'arbor-notes';
const $ = (id) => document.getElementById(id);

/** @type {import('./bindings/js/worker.js').WorkerMemory} */
let mem;
/** The latest search typed; older answers are dropped. */
let searchSeq = 0;
/** Folders of the tree, for the domain and topic pickers. */
let folders = new Map();
let currentEntry = null;

function say(text, kind = 'ok') {
  const box = $('message');
  box.textContent = text;
  box.className = `message ${kind}`;
  box.hidden = false;
}

function clearMessage() {
  $('message').hidden = true;
}

const escapeHTML = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `text` with each word that starts with a query term in <mark>. */
function highlight(text, query) {
  const terms = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [])];
  if (terms.length === 0) return escapeHTML(text);
  const pattern = new RegExp(`(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu');
  return text
    .split(pattern)
    .map((part, i) => (i % 2 === 1 ? `<mark>${escapeHTML(part)}</mark>` : escapeHTML(part)))
    .join('');
}

const entryLink = (path, label = path) => {
  const a = document.createElement('a');
  a.href = `#/entry/${encodeURI(path)}`;
  a.textContent = label;
  return a;
};

async function refreshStatus() {
  const s = await mem.stats();
  const domains = Object.keys(s.domains).length;
  $('status').textContent = `${s.entries} ${s.entries === 1 ? 'entry' : 'entries'} in ${domains} ${domains === 1 ? 'domain' : 'domains'} · kept in this browser (IndexedDB "${DB_NAME}") · engine in a Web Worker`;
}

async function refreshTree() {
  const root = await mem.tree();
  folders = new Map();
  const paths = [];
  const holder = $('tree');
  holder.replaceChildren();
  const build = (node) => {
    const li = document.createElement('li');
    if (node.kind === 'entry') {
      paths.push(node.path);
      li.append(entryLink(node.path, node.title || node.name));
      return li;
    }
    folders.set(node.path, node.kind);
    const details = document.createElement('details');
    details.open = node.kind === 'domain';
    const summary = document.createElement('summary');
    summary.textContent = node.name;
    const ul = document.createElement('ul');
    for (const child of node.children ?? []) if (child.name !== 'context.md') ul.append(build(child));
    details.append(summary, ul);
    li.append(details);
    return li;
  };
  const top = document.createElement('ul');
  for (const child of root.children ?? []) top.append(build(child));
  if (top.children.length === 0) {
    const p = document.createElement('p');
    p.className = 'hint';
    p.textContent = 'The tree is empty. Load the sample notes below to try search and curation at once, write a note, or import a folder of markdown.';
    holder.append(p);
  } else {
    holder.append(top);
  }
  holder.setAttribute('aria-busy', 'false');
  fillList('domains', [...folders].filter(([, k]) => k === 'domain').map(([p]) => p));
  fillList('entry-paths', paths);
  fillTopics();
}

function fillList(id, values) {
  $(id).replaceChildren(...values.map((v) => Object.assign(document.createElement('option'), { value: v })));
}

/** Topics of the chosen domain. */
function fillTopics() {
  const domain = $('note-domain').value.trim();
  const prefix = `${domain}/`;
  fillList('topics', [...folders.keys()].filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length)));
}

async function runSearch() {
  const q = $('search').value;
  const seq = ++searchSeq;
  if (q.trim() === '') {
    $('results').replaceChildren();
    $('search-meta').textContent = '';
    $('answer').hidden = true;
    return;
  }
  const started = performance.now();
  let r;
  try {
    r = await mem.query(q, { limit: 10 });
  } catch (err) {
    if (seq === searchSeq) say(`Search failed: ${err.message}`, 'error');
    return;
  }
  if (seq !== searchSeq) return; // a newer keystroke won
  const roundTrip = performance.now() - started;
  $('search-meta').textContent =
    `${r.results.length} ${r.results.length === 1 ? 'result' : 'results'} · tier ${r.tier} (${r.tierName}) · engine ${r.tookMs.toFixed(2)} ms, ${roundTrip.toFixed(1)} ms with the worker` +
    (r.needsLLM ? ' · no direct answer without an LLM: the best entries are listed' : '') +
    (r.outOfDomain ? ' · nothing stored matches these words' : '');
  $('search-meta').title = r.reason;
  $('search-meta').dataset.query = q; // which question the line describes (the tests wait on it)
  const answer = $('answer');
  answer.hidden = !r.answer;
  if (r.answer) answer.innerHTML = `<strong>Answer (tier ${r.tier}):</strong> ${highlight(r.answer, q)}`;
  $('results').replaceChildren(
    ...r.results.map((hit) => {
      const li = document.createElement('li');
      li.innerHTML = `<a href="#/entry/${encodeURI(hit.path)}" class="hit-title">${highlight(hit.title || hit.path, q)}</a>
        <span class="score" title="normalized BM25 score">score ${hit.score.toFixed(4)}</span>
        <div class="path">${escapeHTML(hit.path)}</div>
        <p class="excerpt">${highlight(hit.excerpt, q)}</p>`;
      return li;
    }),
  );
}

async function openEntry(path) {
  let e;
  try {
    e = await mem.read(path);
  } catch (err) {
    say(`Cannot open ${path}: ${err.message}`, 'error');
    return;
  }
  currentEntry = e.path;
  $('entry-panel').hidden = false;
  $('entry-heading').textContent = e.title || e.path;
  $('entry-path').textContent = e.path;
  $('entry-summary').textContent = e.summary;
  const meta = $('entry-meta');
  meta.replaceChildren();
  for (const [k, v] of [['Tags', e.tags.join(', ')], ['Keywords', e.keywords.join(', ')], ['Created', e.createdAt], ['Updated', e.updatedAt]]) {
    if (!v) continue;
    meta.append(Object.assign(document.createElement('dt'), { textContent: k }), Object.assign(document.createElement('dd'), { textContent: v }));
  }
  const links = (id, list) => {
    const items = list.map((p) => {
      const li = document.createElement('li');
      li.append(entryLink(p));
      return li;
    });
    if (items.length === 0) items.push(Object.assign(document.createElement('li'), { textContent: 'none', className: 'hint' }));
    $(id).replaceChildren(...items);
  };
  links('entry-relations', e.relations);
  links('entry-backlinks', e.backlinks);
  $('entry-markdown').textContent = e.markdown;
  $('entry-heading').focus();
}

/** Runs operations and reports each one's outcome; true when all applied. */
async function curate(ops, verb) {
  clearMessage();
  let r;
  try {
    r = await mem.curate(ops);
  } catch (err) {
    say(`${verb} failed: ${err.message}. Nothing was changed.`, 'error');
    return false;
  }
  const failed = r.applied.filter((a) => a.status !== 'success');
  if (failed.length) say(`${verb} failed: ${failed.map((a) => `${a.path}: ${a.message}`).join('; ')}`, 'error');
  else say(`${verb}: ${r.applied.map((a) => `${a.path} (${a.message})`).join('; ')}`);
  await Promise.all([refreshTree(), refreshStatus()]);
  if ($('search').value) await runSearch();
  return failed.length === 0 ? r : false;
}

function route() {
  const m = location.hash.match(/^#\/entry\/(.+)$/);
  if (m) openEntry(decodeURI(m[1]));
}

function wire() {
  $('search').addEventListener('input', runSearch);
  setupModel(() => mem);
  document.addEventListener('keydown', (ev) => {
    if (ev.key === '/' && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName ?? '')) {
      ev.preventDefault();
      $('search').focus();
    }
  });
  $('note-domain').addEventListener('input', fillTopics);
  window.addEventListener('hashchange', route);

  $('note-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v = (id) => $(id).value.trim();
    const content = { narrative: v('note-text') };
    const tags = v('note-tags').split(',').map((t) => t.trim()).filter(Boolean);
    if (tags.length) content.tags = tags;
    if (v('note-relations')) content.relations = [v('note-relations')];
    const op = { type: 'ADD', path: `${v('note-domain')}/${v('note-topic')}`, title: v('note-title'), content, reason: v('note-reason') };
    if (v('note-summary')) op.summary = v('note-summary');
    const r = await curate([op], 'Curate');
    if (r) {
      for (const id of ['note-title', 'note-summary', 'note-text', 'note-tags', 'note-relations', 'note-reason']) $(id).value = '';
      location.hash = `#/entry/${encodeURI(r.applied[0].path)}`;
    }
  });

  $('delete-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!currentEntry || !confirm(`Delete ${currentEntry}?`)) return;
    const e = await mem.read(currentEntry);
    if (await curate([{ type: 'DELETE', path: currentEntry, title: e.title, reason: $('delete-reason').value.trim() }], 'Delete')) {
      $('entry-panel').hidden = true;
      currentEntry = null;
      history.replaceState(null, '', '#');
    }
  });

  $('merge-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!currentEntry) return;
    const target = $('merge-target').value.trim();
    const r = await curate([{ type: 'MERGE', path: currentEntry, mergeTarget: target, reason: $('merge-reason').value.trim() }], 'Merge');
    if (r) location.hash = `#/entry/${encodeURI(target)}`;
  });

  $('sample-button').addEventListener('click', loadSample);

  $('import-button').addEventListener('click', async () => {
    if (!window.showDirectoryPicker) return $('import-input').click();
    let dir;
    try {
      dir = await window.showDirectoryPicker();
    } catch {
      return; // the user cancelled
    }
    await importFiles(await filesFromDirectory(dir));
  });
  $('import-input').addEventListener('change', async (ev) => {
    await importFiles(await filesFromFileList(ev.target.files));
    ev.target.value = '';
  });

  if (window.showDirectoryPicker) $('export-folder').hidden = false;
  $('export-folder').addEventListener('click', async () => {
    let dir;
    try {
      dir = await window.showDirectoryPicker({ mode: 'readwrite' });
    } catch {
      return;
    }
    const files = await mem.exportFiles();
    await filesToDirectory(dir, files);
    say(`Exported ${files.length} files to the folder "${dir.name}".`);
  });
  $('export-zip').addEventListener('click', async () => {
    const files = await mem.exportFiles();
    const url = URL.createObjectURL(new Blob([zipFiles(files)], { type: 'application/zip' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: 'arbor-notes.zip' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    say(`Downloaded arbor-notes.zip with ${files.length} files.`);
  });
}

/** Imports files into the tree and says what came in; the report, or null when the import failed. */
async function importFiles(files, what = 'Imported') {
  clearMessage();
  let r = null;
  try {
    r = await mem.importFiles(files);
    const skipped = r.skipped.length ? ` Skipped ${r.skipped.length}: ${r.skipped.slice(0, 5).map((s) => `${s.path} (${s.reason})`).join('; ')}${r.skipped.length > 5 ? '; …' : ''}.` : '';
    say(`${what} ${r.imported.length} ${r.imported.length === 1 ? 'file' : 'files'}.${skipped}`, r.imported.length ? 'ok' : 'error');
  } catch (err) {
    say(`${what === 'Imported' ? 'Import' : 'Loading the sample notes'} failed: ${err.message}`, 'error');
  }
  await Promise.all([refreshTree(), refreshStatus()]);
  return r;
}

/** The sample question a first visitor sees answered once the sample notes are in. */
const SAMPLE_QUESTION = 'how often are failed invoices retried';

/**
 * Loads the sample notes (examples/notes, served bundled as one JSON) into
 * the tree, never replacing a note already there, then searches them for a
 * sample question so that search, and the entries to curate, show at once.
 */
async function loadSample() {
  const button = $('sample-button');
  button.disabled = true;
  try {
    let files;
    try {
      const res = await fetch('sample-notes.json');
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      ({ files } = await res.json());
    } catch (err) {
      say(`The sample notes could not be fetched: ${err.message}`, 'error');
      return;
    }
    const r = await importFiles(files, 'Loaded the sample notes:');
    if (!r) return;
    $('search').value = SAMPLE_QUESTION;
    await runSearch();
  } finally {
    button.disabled = false;
  }
}

/** Another tab (or worker) saved changes to the same database: show them. */
function showExternalChange() {
  Promise.all([refreshTree(), refreshStatus(), $('search').value ? runSearch() : null]).catch((err) => say(`Refreshing after another tab's change failed: ${err.message}`, 'error'));
}

async function main() {
  wire();
  try {
    mem = await openMemoryInWorker({ storage: { kind: 'indexedDB', name: DB_NAME }, onExternalChange: showExternalChange });
  } catch (err) {
    $('status').textContent = `The engine could not start: ${err.message}`;
    return;
  }
  for (const w of mem.opened.warnings) console.warn(`arbor: ${w.path}: ${w.message}`);
  await Promise.all([refreshTree(), refreshStatus()]);
  document.body.dataset.ready = 'true';
  route();
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('sw.js').catch((err) => console.warn(`offline cache unavailable: ${err.message}`));
  }
}

main();
