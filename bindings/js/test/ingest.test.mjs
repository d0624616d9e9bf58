// mem.ingest end to end: the real dist/arbor.wasm on a Node folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openMemory, nodeFs, memory, ArborError } from 'arbor-memory';
import { skipWithoutWasm, tmpdir, defer } from './_engine.mjs';

const fixtures = new URL('../../../core/internal/ingest/testdata/', import.meta.url);
const read = (name) => ({ name, content: fs.readFileSync(new URL(name, fixtures), 'utf8') });

test('ingest splits files into entries, then leaves unchanged files alone', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime: '2026-01-01T00:00:00Z' });
  const files = ['guide.md', 'contacts.csv', 'team.ics', 'ratelimit.py', 'lme_sample.json'].map(read);

  const res = await mem.ingest(files);
  assert.deepEqual(res.summary, { files: 5, failedFiles: 0, added: 1 + 3 + 3 + 4 + 3, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
  assert.deepEqual(res.files.map((f) => [f.name, f.format, f.status]), [
    ['guide.md', 'markdown', 'added'],
    ['contacts.csv', 'csv', 'added'],
    ['team.ics', 'calendar', 'added'],
    ['ratelimit.py', 'python', 'added'],
    ['lme_sample.json', 'chat', 'added'],
  ]);
  // A note is one entry, its headings kept below the entry's own.
  const note = fs.readFileSync(path.join(dir, 'documents/guide/guide.md'), 'utf8');
  assert.match(note, /\*\*Task:\*\* Note \(lines 7-45\)/);
  assert.match(note, /\*\*Files:\*\* guide\.md/);
  assert.match(note, /^##### Canary$/m);
  assert.ok(fs.existsSync(path.join(dir, '.arbor/ingest.json')));

  const tree = await mem.tree({ depth: 2 });
  assert.deepEqual(tree.children.map((c) => c.name), ['calendar', 'chats', 'code', 'data', 'documents']);

  const again = await mem.ingest(files);
  assert.deepEqual(again.summary, { files: 5, failedFiles: 0, added: 0, updated: 0, deleted: 0, unchanged: 14, failed: 0 });
  assert.ok(again.files.every((f) => f.status === 'unchanged' && f.applied.length === 0));

  // One section reworded: only its note's entry is written.
  const guide = read('guide.md');
  guide.content = guide.content.replace('never in environment files', 'rotated every 90 days');
  const changed = await mem.ingest(guide);
  assert.equal(changed.files[0].status, 'updated');
  assert.deepEqual(changed.files[0].applied.map((a) => `${a.type} ${a.path}`), ['UPDATE documents/guide/guide.md']);
  const hit = await mem.search('rotated every 90 days');
  assert.equal(hit.results[0].path, 'documents/guide/guide.md');
  // Before tmpdir's cleanup: close writes the lifecycle signals.
  await mem.close();
});

test('ingest reports a bad file in the result and writes nothing of it', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ storage: memory(), fixedTime: '2026-01-01T00:00:00Z' });
  defer(t, () => mem.close());
  const res = await mem.ingest([
    { name: 'broken.jsonl', content: '{"a": 1}\n{"a": \n' },
    { name: 'notes/plan.md', content: '# Plan\n\nShip in May.\n' },
  ], { domain: 'Work' });
  assert.equal(res.files[0].status, 'failed');
  assert.match(res.files[0].message, /malformed JSON on line 2/);
  assert.equal(res.files[1].status, 'added');
  assert.equal(res.files[1].applied[0].path, 'work/notes/plan.md');
  const stats = await mem.stats();
  assert.deepEqual(stats.domains, { work: 1 });

  await assert.rejects(mem.call('ingest', { files: 'nope' }), (err) => err instanceof ArborError && err.code === 'invalid_params');
});

test('ingest takes bytes and the engine detects their encoding', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ storage: memory(), fixedTime: '2026-01-01T00:00:00Z' });
  defer(t, () => mem.close());
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Tea\r\n\r\nThé à la menthe, 5 €.\r\n', 'utf16le')]);
  const cp1252 = Uint8Array.from([...'Prices\n\n'].map((c) => c.charCodeAt(0)).concat([0x93, 0x43, 0x61, 0x66, 0xe9, 0x94, 0x20, 0x80, 0x35, 0x0a]));
  const big = new Uint8Array(100_000).fill(0x61); // more than one chunk of the base64 encoder
  const res = await mem.ingest([
    { name: 'tea.txt', content: utf16 },
    { name: 'prices.txt', content: cp1252.buffer },
    { name: 'big.txt', content: big },
    { name: 'garbled.txt', content: Uint8Array.from([0x63, 0x81]) },
  ]);
  assert.deepEqual(res.files.map((f) => [f.name, f.status, f.message]), [
    ['tea.txt', 'added', undefined],
    ['prices.txt', 'added', undefined],
    ['big.txt', 'added', undefined],
    ['garbled.txt', 'failed', 'bad input: neither UTF-8 nor Windows-1252 text: byte 0x81 at byte 1 (line 1); convert the file to UTF-8'],
  ]);
  assert.match((await mem.read(res.files[0].applied[0].path)).markdown, /Thé à la menthe, 5 €\./);
  assert.match((await mem.read(res.files[1].applied[0].path)).markdown, /“Café” €5/);
  let as = 0; // a line over 16 KiB is cut into entries of at most 16 KiB
  for (const a of res.files[2].applied) as += (await mem.read(a.path)).markdown.match(/a{1000,}/)[0].length;
  assert.equal(as, 100_000);
  assert.equal(res.files[2].entries, 7);
});

test('ingest with prune removes the sources no longer sent, and only their own entries', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime: '2026-01-01T00:00:00Z' });
  const folder = [
    { name: 'notes/a.md', content: '# Alpha\n\nThe alpha plan ships in May.\n' },
    { name: 'notes/b.md', content: '## One\n\nFirst thing.\n\n## Two\n\nSecond thing.\n' },
    { name: 'notes/c.csv', content: 'name,role\nAna,lead\n' },
  ];
  await mem.ingest([...folder, { name: 'other.md', content: '# Other\n\nOutside the folder.\n' }]);
  await mem.curate({ type: 'ADD', path: 'notes/b/mine.md', title: 'Mine', content: { narrative: 'My own note.' }, reason: 'a note of mine' });

  const res = await mem.ingest([folder[0], folder[2]], { prune: ['notes/'] });
  assert.deepEqual(res.summary, { files: 3, failedFiles: 0, removed: 1, added: 0, updated: 0, deleted: 1, unchanged: 2, failed: 0 });
  assert.deepEqual(res.files.map((f) => [f.name, f.status, f.deleted]), [
    ['notes/a.md', 'unchanged', 0],
    ['notes/c.csv', 'unchanged', 0],
    ['notes/b.md', 'removed', 1],
  ]);
  assert.deepEqual(res.files[2].applied.map((a) => `${a.type} ${a.path} ${a.status}`), [
    'DELETE notes/b/b.md success',
  ]);
  assert.ok(!fs.existsSync(path.join(dir, 'notes/b/b.md')));
  assert.ok(fs.existsSync(path.join(dir, 'notes/b/mine.md')));
  assert.ok(fs.existsSync(path.join(dir, 'documents/other/other.md')));
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, '.arbor/ingest.json'), 'utf8'));
  assert.deepEqual(Object.keys(manifest.sources).sort(), ['notes/a.md', 'notes/c.csv', 'other.md']);

  // Again: nothing to remove; `keep` spares what this call does not send.
  const again = await mem.ingest([folder[0]], { prune: ['notes/'], keep: ['notes/c.csv'] });
  assert.deepEqual(again.summary, { files: 1, failedFiles: 0, added: 0, updated: 0, deleted: 0, unchanged: 1, failed: 0 });

  await assert.rejects(mem.ingest([folder[0]], { prune: ['../notes/'] }), (err) => err instanceof ArborError && err.code === 'invalid_params');
  await mem.close();
});

test('ingest prunes a prefix it sends nothing under only with pruneEmpty, and keeps one origin per prefix', { skip: skipWithoutWasm }, async (t) => {
  const dir = tmpdir(t);
  const mem = await openMemory({ storage: nodeFs(dir), fixedTime: '2026-01-01T00:00:00Z' });
  const share = [
    { name: 'share/a.md', content: '# Alpha\n\nThe alpha plan ships in May.\n' },
    { name: 'share/b.md', content: '# Beta\n\nThe beta plan ships in June.\n' },
  ];
  await mem.ingest(share, { origins: { 'share/': '/mnt/share' } });

  // The share is not mounted: nothing is sent under share/.
  const empty = await mem.ingest([], { prune: ['share/'] });
  assert.deepEqual(empty.files, []);
  assert.equal(empty.warnings.length, 1);
  assert.deepEqual({ ...empty.warnings[0], message: undefined }, { code: 'empty_prune', prefix: 'share/', sources: 2, message: undefined });
  assert.ok(fs.existsSync(path.join(dir, 'share/a/a.md')) && fs.existsSync(path.join(dir, 'share/b/b.md')));

  // Another folder of the same name is refused, and writes nothing.
  const other = await mem.ingest([{ name: 'share/a.md', content: '# Alpha\n\nSomething else.\n' }], { prune: ['share/'], origins: { 'share/': '/home/ana/share' } });
  assert.equal(other.files[0].status, 'failed');
  assert.match(other.files[0].message, /\/mnt\/share.*\/home\/ana\/share/);
  assert.deepEqual(other.warnings.map((w) => [w.code, w.prefix, w.origin]), [['other_origin', 'share/', '/mnt/share']]);
  assert.match((await mem.read('share/a/a.md')).markdown, /ships in May/);
  assert.ok(fs.existsSync(path.join(dir, 'share/b/b.md')));

  const asked = await mem.ingest([], { prune: ['share/'], pruneEmpty: true });
  assert.equal(asked.warnings, undefined);
  assert.deepEqual(asked.files.map((f) => [f.name, f.status]), [['share/a.md', 'removed'], ['share/b.md', 'removed']]);
  assert.ok(!fs.existsSync(path.join(dir, 'share/a/a.md')));
  await mem.close();
});
