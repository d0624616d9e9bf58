// mem.sync on isomorphic-git against a real git remote: git http-backend
// behind a local HTTP server (tests/gitserver.mjs). Two roots with
// concurrent work on both sides sync until they converge, as host/gitsync's
// TestTwoRootsConverge does for the Go host: one in a folder (nodeFs, an
// ordinary repository in its .git), one in a memory() storage, which syncs
// as an IndexedDB root does in a browser (the repository under .arbor/git).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { openMemory, nodeFs, memory, ArborError } from '../index.node.js';
import { gitSync } from '../sync/node.js';
import { wasmURL, skipWithoutWasm, tmpdir, defer } from './_engine.mjs';
import { bareRepo, serveGit, folderFiles, skip as skipWithoutGit } from '../../../tests/gitserver.mjs';

const skip = skipWithoutWasm || skipWithoutGit;
const TOKEN = 'team-token-1';
const auth = { token: TOKEN };

/**
 * @param {string} title
 * @param {string} summary
 * @param {string} narrative
 * @param {...string} facts
 */
function entry(title, summary, narrative, ...facts) {
  let s = `---\ntitle: ${title}\nsummary: ${summary}\ncreatedAt: 2026-01-05T09:00:00Z\nupdatedAt: 2026-01-05T09:00:00Z\n---\n\n## Narrative\n${narrative}\n`;
  if (facts.length > 0) s += `\n## Facts\n- ${facts.join('\n- ')}\n`;
  return s;
}

/** The first files of Alice's root. */
const start = {
  'ops/pager/rotation.md': entry('Pager rotation', 'The pager rotates weekly.', 'The pager rotates every Monday.\nThe outgoing engineer writes a handover note.'),
  'ops/pager/escalation.md': entry('Escalation', 'Pages escalate.', 'Page the secondary after fifteen minutes.'),
  'ops/pager/old_runbook.md': entry('Old runbook', 'The old paging runbook.', 'Restart the pager bridge by hand.'),
  'ops/deploys/freeze.md': entry('Deploy freeze', 'No deploys on Fridays.', 'Deploys stop on Friday at noon.\nHotfixes need two approvals.\nThe freeze ends on Monday at nine.'),
  'ops/billing/refunds.md': entry('Refunds', 'Refunds up to 100 EUR.', 'Support approves refunds up to 100 EUR.'),
  'ops/pager/context.md': '# Pager\n\n## Overview\nPaging and on-call.\n',
};

/** Every file of a storage but `.arbor/`, as path → bytes. */
function storageFiles(storage, dir = '') {
  /** @type {Record<string, Buffer>} */
  const out = {};
  for (const e of storage.list(dir)) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (p === '.arbor') continue;
    if (e.dir) Object.assign(out, storageFiles(storage, p));
    else out[p] = Buffer.from(storage.read(p));
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

const text = (files) => Object.fromEntries(Object.entries(files).map(([p, b]) => [p, b.toString()]));

/** Runs a sync and records its steps as "phase round". */
async function syncSteps(mem, options = {}) {
  const steps = [];
  const rep = await mem.sync({ auth, ...options, onProgress: (s) => steps.push(`${s.phase} ${s.round}`) });
  return { rep, steps };
}

const execFileAsync = promisify(execFile);
const git = (dir, ...args) => execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8' });

test('two roots, one in a folder and one in a storage, converge through a git remote over HTTP', { skip }, async (t) => {
  const dir = tmpdir(t);
  const bare = bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir, token: TOKEN });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;

  const aliceDir = path.join(dir, 'alice');
  for (const [p, s] of Object.entries(start)) {
    fs.mkdirSync(path.dirname(path.join(aliceDir, p)), { recursive: true });
    fs.writeFileSync(path.join(aliceDir, p), s);
  }
  const alice = await openMemory({ storage: nodeFs(aliceDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => alice.close());
  const bobStorage = memory();
  const bob = await openMemory({ storage: bobStorage, wasm: wasmURL, git: gitSync() });
  defer(t, () => bob.close());

  // A wrong token reaches nothing, and leaves the root as it was.
  await assert.rejects(alice.sync({ remote, auth: { token: 'wrong' } }), (err) => err instanceof ArborError && err.code === 'sync');
  assert.equal(fs.existsSync(path.join(aliceDir, '.git')), false, 'a refused sync made a repository');

  const first = await syncSteps(alice, { remote });
  assert.equal(first.rep.merge, 'initial');
  assert.equal(first.rep.pushed, true);
  assert.equal(first.rep.ahead, 1);
  assert.equal(first.rep.behind, 0);
  assert.ok(first.rep.committed);
  assert.deepEqual(first.steps, ['commit 0', 'fetch 1', 'push 1']);
  // An ordinary repository: git itself reads it, and the remote has the tree.
  assert.equal(execFileSync('git', ['-C', aliceDir, 'status', '--porcelain'], { encoding: 'utf8' }), '');
  assert.equal(git(bare, 'rev-parse', 'main').trim(), first.rep.head);

  // Bob starts from the remote: his storage becomes a repository, fast-forwarded.
  const b1 = await bob.sync({ remote, auth });
  assert.equal(b1.merge, 'fast-forward');
  assert.equal(b1.behind, 1);
  assert.equal(b1.ahead, 0);
  assert.deepEqual(b1.changed, Object.keys(start).sort());
  assert.deepEqual(text(storageFiles(bobStorage)), text(folderFiles(aliceDir)));
  // The engine read what the sync wrote.
  assert.equal((await bob.search('handover note')).results[0]?.path, 'ops/pager/rotation.md');

  // Alice works through the engine (audited); Bob edits his files by hand.
  const cr = await alice.curate([
    { type: 'UPDATE', path: 'ops/pager/rotation.md', content: { narrative: { text: 'The pager rotates every Monday.\nThe outgoing engineer writes a handover note.\nHandover notes live in the ops channel.' }, tags: ['oncall'] }, reason: 'where handovers go' },
    { type: 'DELETE', path: 'ops/pager/escalation.md', reason: 'escalation moved to the incident policy' },
    { type: 'ADD', path: 'ops/incidents', title: 'Incident policy', content: { narrative: { text: 'Incidents get a commander within five minutes.' } }, reason: 'new policy' },
    { type: 'UPSERT', path: 'ops/pager/old_runbook.md', content: { narrative: { text: 'Restart the pager bridge by hand, then page the secondary.' } }, reason: 'runbook step' },
    { type: 'UPDATE', path: 'ops/billing/refunds.md', summary: 'Refunds up to 150 EUR.', reason: 'limit raised' },
  ]);
  assert.equal(cr.summary.failed, 0, JSON.stringify(cr));

  const dec = (b) => new TextDecoder().decode(b);
  const enc = (s) => new TextEncoder().encode(s);
  const bobRead = (p) => dec(bobStorage.read(p));
  const bobWrite = (p, s) => bobStorage.write(p, enc(s));
  const bobRotation = bobRead('ops/pager/rotation.md').replace('The pager rotates every Monday.', 'The pager rotates every Monday at ten.') + '\n## Facts\n- **handover**: handover is at ten on Mondays\n';
  bobWrite('ops/pager/rotation.md', bobRotation);
  bobWrite('ops/pager/escalation.md', bobRead('ops/pager/escalation.md').replace('fifteen minutes', 'ten minutes'));
  bobWrite('ops/oncall/pairing.md', entry('On-call pairing', 'New engineers shadow.', 'New engineers shadow two rotations first.'));
  // Bob moves the old runbook into a folder of runbooks.
  const runbook = bobRead('ops/pager/old_runbook.md');
  bobStorage.remove('ops/pager/old_runbook.md');
  bobWrite('ops/runbooks/old_runbook.md', runbook);
  bobWrite('ops/billing/refunds.md', bobRead('ops/billing/refunds.md').replace('Refunds up to 100 EUR.', 'Refunds up to 120 EUR.'));
  // Both add the same path.
  bobWrite('ops/deploys/rollback.md', entry('Rollback', 'Roll back first.', 'Roll back before debugging.', '**rollback**: a bad deploy is rolled back within ten minutes'));
  fs.mkdirSync(path.join(aliceDir, 'ops/deploys'), { recursive: true });
  fs.writeFileSync(path.join(aliceDir, 'ops/deploys/rollback.md'), entry('Rollback', 'Roll back first.', 'Roll back before debugging.', '**owner**: the deployer owns the rollback'));

  // A memory() storage reports no changes: its engine is told of hand edits.
  await bob.refresh();

  const unsynced = await bob.syncStatus({ fetch: false });
  assert.deepEqual(unsynced.unsynced, ['ops/billing/refunds.md', 'ops/deploys/rollback.md', 'ops/oncall/pairing.md', 'ops/pager/escalation.md', 'ops/pager/old_runbook.md', 'ops/pager/rotation.md', 'ops/runbooks/old_runbook.md']);

  const ra = await alice.sync({ auth });
  assert.equal(ra.merge, 'none');
  assert.equal(ra.operations, 5);
  const message = execFileSync('git', ['-C', aliceDir, 'log', '-1', '--format=%B', ra.committed], { encoding: 'utf8' });
  assert.match(message, /^arbor sync: /);
  assert.match(message, /UPDATE ops\/pager\/rotation\.md: where handovers go/);

  const rb = await syncSteps(bob);
  // Bob brings in Alice's commit and sends his own and the merge.
  assert.equal(rb.rep.merge, 'merge', JSON.stringify(rb.rep));
  assert.equal(rb.rep.behind, 1);
  assert.equal(rb.rep.ahead, 2);
  assert.deepEqual(rb.steps, ['commit 0', 'fetch 1', 'merge 1', 'push 1']);
  const statuses = Object.fromEntries((rb.rep.files ?? []).map((f) => [f.path, f.status]));
  for (const f of rb.rep.files ?? []) assert.equal('content' in f, false, `the report carries the content of ${f.path}`);
  assert.deepEqual(
    {
      'ops/pager/rotation.md': statuses['ops/pager/rotation.md'],
      'ops/pager/escalation.md': statuses['ops/pager/escalation.md'],
      'ops/runbooks/old_runbook.md': statuses['ops/runbooks/old_runbook.md'],
      'ops/pager/old_runbook.md': statuses['ops/pager/old_runbook.md'],
      'ops/billing/refunds.md': statuses['ops/billing/refunds.md'],
      'ops/deploys/rollback.md': statuses['ops/deploys/rollback.md'],
    },
    {
      'ops/pager/rotation.md': 'merged',
      'ops/pager/escalation.md': 'kept',
      'ops/runbooks/old_runbook.md': 'moved',
      'ops/pager/old_runbook.md': 'deleted',
      'ops/billing/refunds.md': 'conflict',
      'ops/deploys/rollback.md': 'merged',
    },
  );
  assert.deepEqual(rb.rep.conflicts, ['ops/billing/refunds.md']);

  // Alice fast-forwards to Bob's merge; a second round changes nothing.
  const ra2 = await alice.sync({ auth });
  assert.equal(ra2.merge, 'fast-forward');
  assert.equal(ra2.behind, 2);
  assert.equal(ra2.ahead, 0);
  const rb2 = await bob.sync({ auth });
  assert.equal(rb2.merge, 'none');
  assert.equal(rb2.committed, undefined);

  // Both roots hold the same bytes, and nothing is lost.
  const fa = folderFiles(aliceDir);
  assert.deepEqual(text(storageFiles(bobStorage)), text(fa));
  const at = text(fa);
  for (const [p, subs] of Object.entries({
    'ops/pager/rotation.md': ['Monday at ten', 'Handover notes live in the ops channel', 'handover is at ten', 'oncall'],
    'ops/pager/escalation.md': ['ten minutes'],
    'ops/runbooks/old_runbook.md': ['then page the secondary'],
    'ops/billing/refunds.md': ['150 EUR', '120 EUR', '## Merge Conflict'],
    'ops/deploys/rollback.md': ['rolled back within ten minutes', 'the deployer owns the rollback'],
    'ops/incidents/incident_policy.md': ['commander'],
    'ops/oncall/pairing.md': ['shadow'],
  })) {
    for (const s of subs) assert.ok(at[p]?.includes(s), `${p} lacks ${JSON.stringify(s)}:\n${at[p]}`);
  }
  assert.equal(at['ops/pager/old_runbook.md'], undefined, 'the moved entry is still at its old path');

  // Both engines read what the syncs wrote, and answer alike.
  const conflicts = async (mem) => (await mem.stats()).warnings.filter((w) => w.kind === 'conflict').map((w) => w.path);
  assert.deepEqual(await conflicts(alice), ['ops/billing/refunds.md']);
  assert.deepEqual(await conflicts(bob), ['ops/billing/refunds.md']);
  for (const q of ['when does the pager rotate', 'who owns a rollback', 'how fast are pages escalated', 'incident commander']) {
    const x = await alice.query(q);
    const y = await bob.query(q);
    assert.deepEqual(x.results.map((r) => r.path), y.results.map((r) => r.path), q);
    assert.equal(x.tier, y.tier, q);
    assert.equal(x.answer, y.answer, q);
  }
  assert.equal((await bob.search('commander')).results[0]?.path, 'ops/incidents/incident_policy.md');

  // The remote: a merge commit with both parents on top, no .arbor/ in any commit.
  assert.equal(git(bare, 'rev-list', '--parents', '-n', '1', 'main').trim().split(' ').length, 3);
  for (const c of git(bare, 'rev-list', 'main').trim().split('\n')) {
    const names = git(bare, 'ls-tree', '-r', '--name-only', c);
    assert.doesNotMatch(names, /^\.arbor\//m, `commit ${c} holds .arbor/`);
  }
  // Bob's repository stays in his storage's .arbor/, never in his tree.
  assert.ok(bobStorage.stat('.arbor/git/HEAD'));

  const st = await bob.syncStatus({ auth });
  assert.deepEqual({ ahead: st.ahead, behind: st.behind, unsynced: st.unsynced, fetched: st.fetched }, { ahead: 0, behind: 0, unsynced: [], fetched: true });
  bobWrite('ops/pager/rotation.md', bobRead('ops/pager/rotation.md') + '\nmore\n');
  assert.deepEqual((await bob.syncStatus({ fetch: false })).unsynced, ['ops/pager/rotation.md']);
});

test('a push refused because the remote moved on meanwhile fetches and merges again', { skip }, async (t) => {
  const dir = tmpdir(t);
  const bare = bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;
  const storage = memory(start);
  const mem = await openMemory({ storage, wasm: wasmURL, git: gitSync() });
  defer(t, () => mem.close());
  await mem.sync({ remote });

  // Carol pushes with git itself, straight into the bare repository, just
  // as the memory is about to push.
  const carol = path.join(dir, 'carol');
  execFileSync('git', ['clone', '--quiet', bare, carol]);
  await mem.curate({ type: 'UPDATE', path: 'ops/deploys/freeze.md', summary: 'No deploys on Fridays or holidays.', reason: 'holidays too' });
  let raced = false;
  const steps = [];
  const rep = await mem.sync({
    onProgress: (s) => {
      steps.push(`${s.phase} ${s.round}`);
      if (s.phase === 'push' && !raced) {
        raced = true;
        fs.writeFileSync(path.join(carol, 'ops/pager/handover.md'), entry('Handover', 'Handovers are written.', 'The outgoing engineer writes the handover.'));
        const env = { ...process.env, GIT_AUTHOR_NAME: 'Carol', GIT_AUTHOR_EMAIL: 'c@x', GIT_COMMITTER_NAME: 'Carol', GIT_COMMITTER_EMAIL: 'c@x' };
        execFileSync('git', ['-C', carol, 'add', '-A'], { env });
        execFileSync('git', ['-C', carol, 'commit', '--quiet', '-m', 'handover'], { env });
        execFileSync('git', ['-C', carol, 'push', '--quiet', 'origin', 'main'], { env });
      }
    },
  });
  assert.deepEqual(steps, ['commit 0', 'fetch 1', 'merge 1', 'push 1', 'fetch 2', 'merge 2', 'push 2']);
  assert.equal(rep.merge, 'merge');
  assert.equal(rep.pushed, true);
  assert.equal(git(bare, 'rev-parse', 'main').trim(), rep.head);
  assert.ok(rep.changed.includes('ops/pager/handover.md'));
  assert.equal((await mem.search('outgoing engineer handover')).results[0]?.path, 'ops/pager/handover.md');
});

test('sync needs the git option, and a remote the first time', { skip: skipWithoutWasm }, async (t) => {
  const mem = await openMemory({ storage: memory(start), wasm: wasmURL });
  defer(t, () => mem.close());
  await assert.rejects(mem.sync({ remote: 'http://127.0.0.1:9/x.git' }), (err) => err instanceof ArborError && err.code === 'invalid_params' && /gitSync/.test(err.message));
  const synced = await openMemory({ storage: memory(start), wasm: wasmURL, git: gitSync() });
  defer(t, () => synced.close());
  await assert.rejects(synced.sync(), (err) => err instanceof ArborError && err.code === 'sync' && /not a git repository/.test(err.message));
  await assert.rejects(synced.syncStatus(), (err) => err instanceof ArborError && err.code === 'sync');
});

const cli = new URL('../../../bin/arbor', import.meta.url).pathname;
const skipWithoutCLI = skip || (fs.existsSync(cli) ? false : 'bin/arbor is missing: run ./build.sh cli');

test('a JS root and a root of the Go CLI (arbor sync) converge through the same remote', { skip: skipWithoutCLI }, async (t) => {
  const dir = tmpdir(t);
  const bare = bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir, token: TOKEN });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;
  // Run without blocking: the remote is served by this process.
  /** @param {string[]} args */
  const arbor = async (...args) => JSON.parse((await execFileAsync(cli, ['--json', ...args], { encoding: 'utf8', env: { ...process.env, ARBOR_GIT_TOKEN: TOKEN } })).stdout);

  const aliceDir = path.join(dir, 'alice');
  for (const [p, s] of Object.entries(start)) {
    fs.mkdirSync(path.dirname(path.join(aliceDir, p)), { recursive: true });
    fs.writeFileSync(path.join(aliceDir, p), s);
  }
  const alice = await openMemory({ storage: nodeFs(aliceDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => alice.close());
  await alice.sync({ remote, auth });

  const carol = path.join(dir, 'carol');
  execFileSync(cli, ['--root', carol, 'init'], { stdio: 'pipe' });
  assert.equal((await arbor('--root', carol, 'sync', '--remote', remote)).merge, 'fast-forward');

  // Both change one entry, on different lines; Carol adds one by hand.
  await alice.curate({ type: 'UPDATE', path: 'ops/deploys/freeze.md', summary: 'No deploys on Fridays or holidays.', reason: 'holidays' });
  const freeze = path.join(carol, 'ops/deploys/freeze.md');
  fs.writeFileSync(freeze, fs.readFileSync(freeze, 'utf8').replace('Hotfixes need two approvals.', 'Hotfixes need two approvals and a rollback plan.'));
  fs.mkdirSync(path.join(carol, 'ops/oncall'), { recursive: true });
  fs.writeFileSync(path.join(carol, 'ops/oncall/pairing.md'), entry('On-call pairing', 'New engineers shadow.', 'New engineers shadow two rotations first.'));

  assert.equal((await alice.sync({ auth })).merge, 'none');
  const rc = await arbor('--root', carol, 'sync');
  assert.equal(rc.merge, 'merge');
  assert.deepEqual(rc.conflicts, []);
  const ra = await alice.sync({ auth });
  assert.equal(ra.merge, 'fast-forward');
  assert.ok(ra.changed.includes('ops/oncall/pairing.md'));

  const fa = text(folderFiles(aliceDir));
  assert.deepEqual(text(folderFiles(carol)), fa);
  assert.ok(fa['ops/deploys/freeze.md'].includes('or holidays') && fa['ops/deploys/freeze.md'].includes('a rollback plan'), fa['ops/deploys/freeze.md']);
  assert.equal((await alice.search('shadow two rotations')).results[0]?.path, 'ops/oncall/pairing.md');
  assert.equal(git(bare, 'rev-parse', 'main').trim(), ra.head);

  // The Go CLI reads the repository and the sync record the JS sync keeps in Alice's folder.
  const st = await arbor('--root', aliceDir, 'sync', '--status');
  assert.deepEqual({ ahead: st.ahead, behind: st.behind, unsynced: st.unsynced, operations: st.operations }, { ahead: 0, behind: 0, unsynced: [], operations: 0 });
  assert.ok(st.lastSync);
});

test("dot-files are git's: written into a folder, kept in git alone by a storage", { skip }, async (t) => {
  const dir = tmpdir(t);
  const bare = bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;
  const aliceDir = path.join(dir, 'alice');
  fs.mkdirSync(path.join(aliceDir, 'ops/billing'), { recursive: true });
  fs.writeFileSync(path.join(aliceDir, 'ops/billing/refunds.md'), start['ops/billing/refunds.md']);
  fs.writeFileSync(path.join(aliceDir, '.gitignore'), '*.tmp\n');
  const alice = await openMemory({ storage: nodeFs(aliceDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => alice.close());
  await alice.sync({ remote });
  assert.equal(git(bare, 'show', 'main:.gitignore'), '*.tmp\n');

  // A storage has no dot-files: .gitignore stays in git through its syncs.
  const storage = memory();
  const bob = await openMemory({ storage, wasm: wasmURL, git: gitSync() });
  defer(t, () => bob.close());
  const rb = await bob.sync({ remote });
  assert.deepEqual(rb.changed, ['.gitignore', 'ops/billing/refunds.md']);
  assert.throws(() => storage.stat('.gitignore'));
  await bob.curate({ type: 'UPDATE', path: 'ops/billing/refunds.md', summary: 'Refunds up to 120 EUR.', reason: 'raised' });
  assert.deepEqual((await bob.syncStatus({ fetch: false })).unsynced, ['ops/billing/refunds.md']);
  await bob.sync();
  assert.equal(git(bare, 'show', 'main:.gitignore'), '*.tmp\n');

  // Another folder gets the remote's changes to a dot-file on disk.
  const daveDir = path.join(dir, 'dave');
  const dave = await openMemory({ storage: nodeFs(daveDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => dave.close());
  await dave.sync({ remote });
  assert.equal(fs.readFileSync(path.join(daveDir, '.gitignore'), 'utf8'), '*.tmp\n');
  fs.writeFileSync(path.join(aliceDir, '.gitignore'), '*.tmp\n*.bak\n');
  assert.equal((await alice.sync()).merge, 'merge'); // Bob's commit meets Alice's
  const rd = await dave.sync();
  assert.equal(rd.merge, 'fast-forward');
  assert.ok(rd.changed.includes('.gitignore'));
  assert.equal(fs.readFileSync(path.join(daveDir, '.gitignore'), 'utf8'), '*.tmp\n*.bak\n');
  assert.deepEqual(text(folderFiles(daveDir)), text(folderFiles(aliceDir)));
  assert.equal(execFileSync('git', ['-C', daveDir, 'status', '--porcelain'], { encoding: 'utf8' }), '');
  assert.deepEqual(fs.readdirSync(daveDir).filter((n) => n.startsWith('.arbor-tmp-')), []);
});

test("a folder's sync holds the root's lock only to commit and merge, and takes turns on .arbor/sync.lock", { skip }, async (t) => {
  const dir = tmpdir(t);
  const bare = bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;
  const root = path.join(dir, 'alice');
  fs.mkdirSync(path.join(root, 'ops/billing'), { recursive: true });
  fs.writeFileSync(path.join(root, 'ops/billing/refunds.md'), start['ops/billing/refunds.md']);
  const mem = await openMemory({ storage: nodeFs(root), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => mem.close());
  /** @type {Record<string, { rootLock: boolean, syncLock: boolean }>} */
  const seen = {};
  const late = entry('Late note', 'Written during the fetch.', 'Another process wrote this while the sync fetched.');
  const rep = await mem.sync({
    remote,
    onProgress: (s) => {
      seen[`${s.phase} ${s.round}`] = { rootLock: fs.existsSync(path.join(root, '.arbor/lock')), syncLock: fs.existsSync(path.join(root, '.arbor/sync.lock')) };
      // Another process writes while this sync is on the network: the same sync commits and pushes it.
      if (s.phase === 'fetch') fs.writeFileSync(path.join(root, 'ops/billing/late.md'), late);
    },
  });
  assert.deepEqual(seen['fetch 1'], { rootLock: false, syncLock: true });
  assert.deepEqual(seen['push 1'], { rootLock: false, syncLock: true });
  assert.equal(fs.existsSync(path.join(root, '.arbor/sync.lock')), false, 'the turn was not released');
  assert.equal(git(bare, 'show', 'main:ops/billing/late.md'), late);
  assert.equal(git(bare, 'rev-parse', 'main').trim(), rep.head);
  assert.equal(execFileSync('git', ['-C', root, 'status', '--porcelain'], { encoding: 'utf8' }), '');
});

test('a sync removes and overwrites nothing a person edited during its merge, nor a file git ignores here', { skip }, async (t) => {
  const dir = tmpdir(t);
  const bare = bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;
  const aliceDir = path.join(dir, 'alice');
  const bobDir = path.join(dir, 'bob');
  const write = (root, p, s) => {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), s);
  };
  const read = (root, p) => fs.readFileSync(path.join(root, p), 'utf8');
  write(aliceDir, 'ops/x.md', entry('X', 'x.', 'X.'));
  write(aliceDir, '.gitignore', '*.tmp\n');
  const alice = await openMemory({ storage: nodeFs(aliceDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => alice.close());
  await alice.sync({ remote });
  const bob = await openMemory({ storage: nodeFs(bobDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => bob.close());
  await bob.sync({ remote });
  fs.rmSync(path.join(bobDir, 'ops/x.md'));
  write(bobDir, '.gitignore', '*.tmp\n*.bak\n');
  await bob.sync();

  // Alice edits, after her sync committed and before it writes the merge
  // (.gitignore first: the merge writes its files in order).
  for (const [p, edit] of [
    ['.gitignore', '*.tmp\n*.log\n'],
    ['ops/x.md', entry('X', 'x.', 'X, as Alice wrote it during the sync.')],
  ]) {
    write(aliceDir, `ops/y_${p.length}.md`, entry('Y', 'y.', 'Y.'));
    const during = (s) => s.phase === 'merge' && write(aliceDir, p, edit);
    await assert.rejects(alice.sync({ onProgress: during }), (err) => err instanceof ArborError && err.message.includes(p));
    assert.equal(read(aliceDir, p), edit);
  }
  await alice.sync();
  assert.match(read(aliceDir, 'ops/x.md'), /as Alice wrote it during the sync/); // an edit beats a delete
  assert.match(read(aliceDir, '.gitignore'), /\*\.log/);
  assert.match(read(aliceDir, '.gitignore'), /\*\.bak/);

  // A file git ignores here that the other side tracks: the sync stops
  // before writing anything, naming it.
  write(aliceDir, '.git/info/exclude', 'drafts/\n');
  write(aliceDir, 'drafts/plan.md', "Alice's draft\n");
  await alice.sync();
  assert.throws(() => git(bare, 'show', 'main:drafts/plan.md'), /does not exist|exists on disk/);
  await bob.sync();
  write(bobDir, 'drafts/plan.md', "Bob's draft\n");
  write(bobDir, 'ops/x.md', entry('X', 'x.', 'X, as Bob wrote it.'));
  await bob.sync();
  await assert.rejects(alice.sync(), (err) => err instanceof ArborError && err.message.includes('drafts/plan.md'));
  assert.equal(read(aliceDir, 'drafts/plan.md'), "Alice's draft\n");
  assert.doesNotMatch(read(aliceDir, 'ops/x.md'), /Bob/);
  fs.renameSync(path.join(aliceDir, 'drafts/plan.md'), path.join(dir, 'plan.md'));
  await alice.sync();
  assert.equal(read(aliceDir, 'drafts/plan.md'), "Bob's draft\n");
});

test('a second conflict on a file that is not text leaves the first conflict copy as it is', { skip }, async (t) => {
  const dir = tmpdir(t);
  bareRepo(dir, 'team.git');
  const server = await serveGit({ root: dir });
  defer(t, () => server.close());
  const remote = `${server.url}/team.git`;
  const img = 'ops/billing/diagram.png';
  const aliceDir = path.join(dir, 'alice');
  const bobDir = path.join(dir, 'bob');
  const write = (root, s) => {
    fs.mkdirSync(path.dirname(path.join(root, img)), { recursive: true });
    fs.writeFileSync(path.join(root, img), Buffer.from(`\x89PNG\x00${s}`, 'latin1'));
  };
  write(aliceDir, 'base');
  const alice = await openMemory({ storage: nodeFs(aliceDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => alice.close());
  await alice.sync({ remote });
  const bob = await openMemory({ storage: nodeFs(bobDir), wasm: wasmURL, git: gitSync(), watch: false });
  defer(t, () => bob.close());
  await bob.sync({ remote });
  for (const round of [1, 2]) {
    write(aliceDir, `alice ${round}`);
    write(bobDir, `bob ${round}`);
    await bob.sync();
    assert.equal((await alice.sync()).conflicts.length, 1);
  }
  const contents = Object.entries(folderFiles(aliceDir)).map(([p, b]) => `${p}=${b.toString('latin1')}`);
  for (const round of [1, 2]) assert.ok(contents.some((c) => c.endsWith(`\x89PNG\x00bob ${round}`)), `Bob's version of round ${round} is lost: ${JSON.stringify(contents)}`);
});
