// The benchmark protocol in JavaScript, for minisearch.mjs and
// arbor-wasm.mjs: loading the data files, cleaning LoCoMo evidence, laying
// the conversations out as entries, and the metrics. It mirrors corpus.go,
// data.go and metrics.go; keep them in step (the Go harness recomputes every
// metric from the rankings these scripts print, and checks that the wasm
// run ranks like the native one).

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export function readJSON(path) {
  let buf = readFileSync(path);
  if (buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf);
  return { data: JSON.parse(buf.toString('utf8')), bytes: buf.length };
}

export function args(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?([\w-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m) continue;
    const key = m[1];
    let val = m[2];
    if (val === undefined) {
      if (typeof defaults[key] === 'boolean') val = true;
      else val = argv[++i];
    }
    out[key] = typeof defaults[key] === 'number' ? Number(val) : val;
  }
  return out;
}

export const log = (msg) => process.stderr.write(`[${new Date().toTimeString().slice(0, 8)}] ${msg}\n`);

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

// ---- ids and evidence (metrics.go) -------------------------------------

export function parseTurnId(s) {
  const m = /^D:?(\d+):(\d+)$/.exec(s);
  if (!m) return null;
  const session = Number(m[1]), turn = Number(m[2]);
  if (!(session > 0 && turn > 0)) return null;
  return { session, turn, id: `D${session}:${turn}` };
}

export function parseEvidence(raw, exists) {
  const out = [];
  const seen = new Set();
  for (const s of raw || []) {
    for (const piece of String(s).split(/[;,\s]+/).filter(Boolean)) {
      const t = parseTurnId(piece);
      if (!t || (exists && !exists(t.id))) continue;
      if (!seen.has(t.id)) { seen.add(t.id); out.push(t.id); }
    }
  }
  return out;
}

// ---- layout (corpus.go) ------------------------------------------------

export function snake(s) {
  const words = String(s).toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  return words.length ? words.join('_') : 'x';
}

const pad = (n, w) => String(n).padStart(w, '0');
const dayText = (d) => `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
const rfc3339 = (d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

// "1:56 pm on 8 May, 2023"
export function parseLocomoDate(s) {
  const m = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) ([A-Za-z]+),? (\d{4})$/.exec(String(s || '').trim());
  if (!m) return null;
  const month = MONTHS.findIndex((x) => x.toLowerCase().startsWith(m[5].toLowerCase().slice(0, 3)));
  if (month < 0) return null;
  let h = Number(m[1]) % 12;
  if (m[3] === 'pm') h += 12;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), h, Number(m[2])));
}

// "2023/05/20 (Sat) 02:21"
export function parseLMEDate(s) {
  const m = /^(\d{4})\/(\d{2})\/(\d{2})(?:\s*\([^)]*\))?(?:\s+(\d{2}):(\d{2}))?$/.exec(String(s || '').trim());
  if (!m) return null;
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] || 0), Number(m[5] || 0)));
}

export function loadLocomo(path) {
  const { data, bytes } = readJSON(path);
  const convs = data.map((raw, ci) => {
    const c = raw.conversation || {};
    const sessions = [];
    for (const [k, v] of Object.entries(c)) {
      const m = /^session_(\d+)$/.exec(k);
      if (!m || !Array.isArray(v) || v.length === 0) continue;
      const n = Number(m[1]);
      const turns = v.map((t, i) => {
        let id = parseTurnId(t.dia_id || '');
        if (!id || id.session !== n) id = { session: n, turn: i + 1, id: `D${n}:${i + 1}` };
        return { id: id.id, turn: id.turn, speaker: t.speaker, text: t.text || '', caption: t.blip_caption || '' };
      });
      sessions.push({ n, date: parseLocomoDate(c[`${k}_date_time`]), turns });
    }
    sessions.sort((a, b) => a.n - b.n);
    const turnIds = new Set(sessions.flatMap((s) => s.turns.map((t) => t.id)));
    const sampleId = raw.sample_id || `conv-${ci}`;
    const questions = (raw.qa || []).map((qa, i) => {
      const gold = parseEvidence(qa.evidence, (id) => turnIds.has(id));
      const scored = qa.category !== 5 && (qa.evidence || []).length > 0 && gold.length > 0;
      return { key: `${sampleId}#${i}`, text: qa.question, category: qa.category, gold, scored };
    });
    return { sampleId, speakerA: c.speaker_a, speakerB: c.speaker_b, sessions, questions };
  });
  return { convs, bytes };
}

export function turnText(t) {
  let text = String(t.text).trim();
  const c = String(t.caption || '').trim();
  if (c) text += ` [shares a photo: ${c}]`;
  return text;
}

// One entry per turn, with `context` preceding turns in its flow (see
// locomoUnits in corpus.go).
export function locomoUnits(conv, context = 0) {
  const domain = snake(`${conv.speakerA} and ${conv.speakerB}`);
  const out = [];
  for (const s of conv.sessions) {
    for (const [i, t] of s.turns.entries()) {
      const flow = s.turns.slice(Math.max(i - context, 0), i).map((p) => `In reply to ${p.speaker}: ${turnText(p)}`);
      out.push({
        path: `${domain}/session_${pad(s.n, 2)}/turn_${pad(t.turn, 3)}.md`,
        title: s.date ? `${t.speaker} on ${dayText(s.date)}` : t.speaker,
        task: `Turn ${t.id} of session ${s.n}`,
        author: t.speaker,
        flow: flow.join('\n'),
        body: turnText(t),
        time: s.date,
        id: t.id,
        session: s.n,
      });
    }
  }
  return out;
}

export function loadLongMemEval(path) {
  const { data, bytes } = readJSON(path);
  for (const q of data) {
    const pos = new Map(q.haystack_session_ids.map((id, i) => [id, i]));
    q.gold = [...new Set((q.answer_session_ids || []).filter((id) => pos.has(id)).map((id) => pos.get(id)))];
    q.abstention = q.question_id.endsWith('_abs');
  }
  return { questions: data, bytes };
}

function lmeBody(msgs) {
  return msgs.map((m) => `**${m.role === 'assistant' ? 'Assistant' : 'User'}:** ${String(m.content).trim()}`).join('\n\n');
}

// One entry per session, or per group of turnsPerEntry turns (see lmeUnits
// in corpus.go). Session ids and has_answer are never used.
export function lmeUnits(q, turnsPerEntry = 0) {
  const out = [];
  q.haystack_sessions.forEach((msgs, i) => {
    const date = parseLMEDate(q.haystack_dates[i]);
    const topic = date ? `${date.getUTCFullYear()}_${pad(date.getUTCMonth() + 1, 2)}` : 'undated';
    const title = date ? `Chat on ${dayText(date)}` : 'Chat';
    let groups = [msgs];
    if (turnsPerEntry > 0 && msgs.length > turnsPerEntry) {
      groups = [];
      for (let j = 0; j < msgs.length; j += turnsPerEntry) groups.push(msgs.slice(j, j + turnsPerEntry));
    }
    groups.forEach((part, g) => {
      const multi = groups.length > 1;
      out.push({
        path: multi ? `chats/${topic}/session_${pad(i + 1, 2)}_part_${pad(g + 1, 2)}.md` : `chats/${topic}/session_${pad(i + 1, 2)}.md`,
        title: multi ? `${title} (part ${g + 1})` : title,
        task: 'Chat with the assistant',
        author: 'user',
        body: lmeBody(part),
        time: date,
        session: i,
      });
    });
  });
  return out;
}

// The curate operation of a unit (unit.operation in corpus.go).
export function operation(u) {
  const rawConcept = { task: u.task, author: u.author };
  if (u.flow) rawConcept.flow = u.flow;
  if (u.time) rawConcept.timestamp = rfc3339(u.time);
  return { type: 'ADD', path: u.path, title: u.title, content: { rawConcept, narrative: u.body }, reason: 'conversation memory import' };
}

export const searchText = (u) => [u.task, u.author, u.flow || '', u.body].join('\n');
export const unitBytes = (u) => Buffer.byteLength(u.title) + Buffer.byteLength(u.task) + Buffer.byteLength(u.author) + Buffer.byteLength(u.flow || '') + Buffer.byteLength(u.body);

// Groups units by session, in time order (as they are curated).
export function bySession(units) {
  const groups = [];
  let last = null;
  for (const u of units) {
    if (u.session !== last) { groups.push([]); last = u.session; }
    groups[groups.length - 1].push(u);
  }
  return groups.sort((a, b) => (a[0].time ? a[0].time.getTime() : 0) - (b[0].time ? b[0].time.getTime() : 0));
}

// ---- metrics (metrics.go) ----------------------------------------------

const top = (ranked, k) => new Set(ranked.slice(0, k));
export function recallAtK(ranked, gold, k) {
  const g = [...new Set(gold)];
  if (!g.length) return 0;
  const t = top(ranked, k);
  return g.filter((x) => t.has(x)).length / g.length;
}
export const anyAtK = (ranked, gold, k) => { const t = top(ranked, k); return gold.some((x) => t.has(x)); };
export const allAtK = (ranked, gold, k) => { const t = top(ranked, k); return gold.length > 0 && gold.every((x) => t.has(x)); };
export const dedupe = (xs) => [...new Set(xs)];

export function percentile(xs, p) {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(Math.max(Math.ceil((p / 100) * s.length), 1), s.length) - 1];
}

const CATS = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

export function locomoMetrics(convs, rankings) {
  const groups = {};
  const add = (name, q, ranked) => {
    const g = (groups[name] ||= { n: 0, r5: 0, r10: 0, hit1: 0 });
    const goldSessions = new Set(q.gold.map((id) => parseTurnId(id).session));
    g.n++;
    g.r5 += recallAtK(ranked, q.gold, 5);
    g.r10 += recallAtK(ranked, q.gold, 10);
    const t = ranked[0] && parseTurnId(ranked[0]);
    g.hit1 += t && goldSessions.has(t.session) ? 1 : 0;
  };
  for (const c of convs) for (const q of c.questions) {
    if (!q.scored || !(q.key in rankings)) continue;
    add('all', q, rankings[q.key]);
    add(CATS[q.category], q, rankings[q.key]);
  }
  for (const g of Object.values(groups)) { g.r5 /= g.n; g.r10 /= g.n; g.hit1 /= g.n; }
  return groups;
}

export function lmeMetrics(questions, rankings) {
  const groups = {};
  for (const q of questions) {
    if (q.abstention || !q.gold.length || !(q.question_id in rankings)) continue;
    const r = rankings[q.question_id];
    for (const name of ['all', q.question_type]) {
      const g = (groups[name] ||= { n: 0, any1: 0, any5: 0, all5: 0, any10: 0, all10: 0 });
      g.n++;
      g.any1 += anyAtK(r, q.gold, 1);
      g.any5 += anyAtK(r, q.gold, 5);
      g.all5 += allAtK(r, q.gold, 5);
      g.any10 += anyAtK(r, q.gold, 10);
      g.all10 += allAtK(r, q.gold, 10);
    }
  }
  for (const g of Object.values(groups)) for (const k of ['any1', 'any5', 'all5', 'any10', 'all10']) g[k] /= g.n;
  return groups;
}
