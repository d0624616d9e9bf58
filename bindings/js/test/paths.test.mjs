// Path normalisation and twins through the JS package: the engine's rules
// (docs/format.md, "Paths") reach every host alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openMemory, memory } from 'arbor-memory';
import { skipWithoutWasm, defer } from './_engine.mjs';

const fixedTime = '2026-01-01T00:00:00Z';
const op = (path, title) => ({ type: 'ADD', path, title, content: { narrative: 'x' }, reason: 'r' });

test('created paths are normalised into existing folders; Windows names refused; twins reported', { skip: skipWithoutWasm }, async (t) => {
  const store = memory({
    'Projects/Roadmap/Q3 Goals.md': '# Q3 Goals\n',
    'notes/café.md': '# composed\n',
    'notes/cafe\u0301.md': '# decomposed\n',
  });
  const mem = await openMemory({ storage: store, fixedTime });
  defer(t, () => mem.close());

  assert.deepEqual(mem.opened.warnings.map((w) => [w.kind, w.paths]), [['twins', ['notes/cafe\u0301.md', 'notes/café.md']]]);
  assert.match(mem.opened.warnings[0].message, /differ only in Unicode form/);

  const res = await mem.curate([op('projects/ROADMAP', 'Q4 Goals'), op('New Area/Sub Topic', 'First'), op('CON/x', 'y'), op('projects/roadmap', 'q3 goals')]);
  assert.deepEqual(res.applied.map((a) => [a.status, a.path]), [
    ['success', 'Projects/Roadmap/q4_goals.md'],
    ['success', 'new_area/sub_topic/first.md'],
    ['failed', 'CON/x/y.md'],
    ['failed', 'Projects/Roadmap/Q3 Goals.md'],
  ]);
  assert.match(res.applied[2].message, /"CON" is a device name Windows reserves/);
  assert.equal(res.applied[3].message, 'already exists: Projects/Roadmap/Q3 Goals.md');
  assert.throws(() => store.stat('CON'), { code: 'ENOENT' });
  assert.deepEqual(store.list('').map((e) => e.name).filter((n) => !n.startsWith('.')).sort(), ['Projects', 'new_area', 'notes']);

  const read = await mem.read('PROJECTS/roadmap/q3 goals.md');
  assert.equal(read.path, 'Projects/Roadmap/Q3 Goals.md');
});
