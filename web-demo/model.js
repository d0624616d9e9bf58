// The demo's model: the settings panel, and asking a question through the
// LLM tiers (3 and 4) when the user presses Enter. Search as you type
// never comes here, so typing costs no model call. The adapter, and its
// key, live in the page; the engine's worker only relays pending results.

import { openaiCompatible, anthropic } from './bindings/js/llm/index.js';

const STORE = 'arbor-notes-model';
const $ = (id) => document.getElementById(id);

const PRESETS = {
  'openai-compatible': { label: 'OpenAI-compatible', baseURL: 'https://api.openai.com/v1', model: 'gpt-4o-mini' },
  anthropic: { label: 'Anthropic', baseURL: 'https://api.anthropic.com', model: 'claude-3-5-haiku-latest' },
};

/** What each error code of a model call (docs/ABI.md §6) means to the user. */
const FAILURES = {
  auth: 'The provider refused the API key. Check the key (and the base URL) in Model settings.',
  rate_limit: 'The provider is limiting requests and the retries ran out. Wait a moment and ask again.',
  timeout: 'The model did not answer in time.',
  http: 'The model could not be reached or answered with an error. Check the base URL, and that the server accepts requests from this page (CORS).',
  invalid: 'The model answered something that could not be read.',
};

/** @type {{ provider: string, baseURL: string, model: string, apiKey: string, remember: boolean } | null} */
let settings = null;
/** @type {import('./bindings/js/llm/index.js').LLMAdapter | null} */
let adapter = null;
/** The running question's controller and progress line. */
let asking = null;

/**
 * Wires the settings panel and the Ask path.
 *
 * @param {() => import('./bindings/js/worker.js').WorkerMemory | undefined} memory the open memory, once there is one
 */
export function setupModel(memory) {
  $('model-provider').addEventListener('change', showPreset);
  $('model-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    save();
  });
  $('model-forget').addEventListener('click', forget);
  $('search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const mem = memory();
    if (adapter && mem && $('search').value.trim()) ask(mem, $('search').value.trim());
  });
  $('ask-cancel').addEventListener('click', () => asking?.controller.abort(new Error('you pressed Cancel')));

  let stored = null;
  try {
    stored = JSON.parse(localStorage.getItem(STORE) ?? 'null');
  } catch {
    // unreadable or blocked storage: start with no model
  }
  if (stored) {
    fillForm({ ...stored, remember: true });
    apply({ ...stored, remember: true });
  } else {
    showPreset();
  }
  showState();
}

function fillForm(s) {
  $('model-provider').value = PRESETS[s.provider] ? s.provider : 'openai-compatible';
  $('model-base-url').value = s.baseURL ?? '';
  $('model-name').value = s.model ?? '';
  $('model-key').value = s.apiKey ?? '';
  $('model-remember').checked = s.remember;
  showPreset();
}

function showPreset() {
  const p = PRESETS[$('model-provider').value];
  $('model-base-url').placeholder = p.baseURL;
  $('model-name').placeholder = p.model;
}

/** Builds the adapter for `s`; throws the adapter's TypeError for bad settings. */
function apply(s) {
  const options = { model: s.model, apiKey: s.apiKey || undefined, baseURL: s.baseURL || undefined, onRetry: showRetry };
  adapter = s.provider === 'anthropic' ? anthropic(options) : openaiCompatible(options);
  settings = s;
}

function save() {
  const s = {
    provider: $('model-provider').value,
    baseURL: $('model-base-url').value.trim(),
    model: $('model-name').value.trim(),
    apiKey: $('model-key').value.trim(),
    remember: $('model-remember').checked,
  };
  try {
    apply(s);
  } catch (err) {
    problem(err.message.replace(/^arbor llm: /, ''));
    return;
  }
  problem('');
  try {
    if (s.remember) localStorage.setItem(STORE, JSON.stringify({ provider: s.provider, baseURL: s.baseURL, model: s.model, apiKey: s.apiKey }));
    else localStorage.removeItem(STORE);
  } catch (err) {
    problem(`Saved for this tab only: this browser would not store the settings (${err.message}).`);
    settings.remember = false;
    $('model-remember').checked = false;
    showState();
    return;
  }
  showState();
  // Out of the way of the answers; the note says what was saved.
  $('model-settings').open = false;
  $('search').focus();
}

function forget() {
  asking?.controller.abort(new Error('the model settings were forgotten'));
  adapter = null;
  settings = null;
  try {
    localStorage.removeItem(STORE);
  } catch {
    // nothing was stored where nothing can be
  }
  fillForm({ provider: $('model-provider').value, remember: false });
  problem('');
  showState();
}

function problem(text) {
  $('model-problem').textContent = text;
  $('model-problem').hidden = !text;
}

/** The LLM note, the Ask button and the Enter hint follow the settings. */
function showState() {
  const note = $('llm-note');
  if (!settings) {
    note.textContent =
      'No LLM is configured: answers come only from the no-LLM tiers (query cache and direct answers over BM25 search). Nothing leaves this browser. Set a model up in Model settings to ask questions.';
  } else {
    const where = settings.baseURL || PRESETS[settings.provider].baseURL;
    note.textContent =
      `Model: ${settings.model} (${PRESETS[settings.provider].label}, ${where}), ` +
      (settings.remember ? 'remembered on this device. ' : 'kept for this tab only. ') +
      'Search as you type uses only the no-LLM tiers; press Enter or Ask to ask the model (tiers 3 and 4).';
  }
  $('ask-button').hidden = !settings;
  $('ask-hint').hidden = !settings;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function progress(text) {
  $('ask-progress').textContent = text;
}

function showRetry(r) {
  if (!asking) return;
  const why = r.status ? `HTTP ${r.status}` : r.reason;
  progress(`Model step ${asking.step}: ${why}; retrying in ${(r.waitMs / 1000).toFixed(1)} s (attempt ${r.attempt + 1})…`);
}

/**
 * Asks `question` through query with the adapter: tiers 0–2 first, then
 * the model. One question at a time; a new one cancels the last.
 */
async function ask(mem, question) {
  asking?.controller.abort(new Error('a newer question'));
  // Forget or Save during the question must not change the one it uses.
  const llm = adapter;
  const name = settings.model;
  const controller = new AbortController();
  const run = { controller, step: 0, tokensIn: 0, tokensOut: 0, failures: [] };
  asking = run;
  const started = performance.now();
  $('ask').hidden = false;
  $('ask-question').textContent = question;
  $('ask-answer').replaceChildren();
  $('ask-sources-block').hidden = true;
  $('ask-error').hidden = true;
  $('ask-cancel').hidden = false;
  progress(`Searching, then asking ${name} if the no-LLM tiers cannot answer…`);
  const tokens = () => `${run.tokensIn + run.tokensOut} tokens (${run.tokensIn} in, ${run.tokensOut} out)`;
  // Counts the calls as they start, so the line says which step is waiting.
  const counting = {
    provider: llm.provider,
    model: llm.model,
    complete: (request, options) => {
      run.step++;
      if (asking === run) progress(`Model step ${run.step}: waiting for ${name}…${run.step > 1 ? ` ${tokens()} so far` : ''}`);
      return llm.complete(request, options);
    },
  };
  let r;
  try {
    r = await mem.query(question, {
      limit: 10,
      llm: counting,
      signal: controller.signal,
      onStep: (s) => {
        run.tokensIn += s.response?.usage?.input_tokens ?? 0;
        run.tokensOut += s.response?.usage?.output_tokens ?? 0;
        if (s.error) run.failures.push(s.error);
        if (asking === run) progress(`Model step ${s.step} ${s.error ? `failed (${s.error.code})` : 'answered'} · ${tokens()}`);
      },
    });
  } catch (err) {
    if (asking !== run) return;
    $('ask-cancel').hidden = true;
    asking = null;
    if (err.code === 'cancelled') {
      progress(`Cancelled after ${plural(run.step, 'model call')}; nothing was kept.`);
    } else {
      progress('');
      showError(`The question failed (${err.code ?? err.name}): ${err.message}`);
    }
    return;
  }
  if (asking !== run) return;
  asking = null;
  $('ask-cancel').hidden = true;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const calls = r.llm?.steps.length ?? 0;
  const trace = r.llm ? ` · ${plural(calls, 'model call')}, ${r.llm.inputTokens + r.llm.outputTokens} tokens (${r.llm.inputTokens} in, ${r.llm.outputTokens} out${r.llm.estimated ? ', estimated' : ''})` : ' · no model call needed';
  progress(`Answered by tier ${r.tier} (${r.tierName})${trace} · ${seconds} s${r.incomplete ? ' · incomplete: the model stopped before a final answer' : ''}`);
  $('ask-progress').title = r.reason;
  if (run.failures.length) {
    const f = run.failures[run.failures.length - 1];
    showError(`${FAILURES[f.code] ?? 'The model call failed.'} (${f.code}: ${f.message}) The answer below comes from the no-LLM tiers.`);
  }
  renderAnswer(r);
}

function showError(text) {
  $('ask-error').textContent = text;
  $('ask-error').hidden = false;
}

const PATH = /([\p{L}\p{N}_.-]+(?:\/[\p{L}\p{N}_.-]+)+\.md)/u;

function entryLink(path) {
  const a = document.createElement('a');
  a.href = `#/entry/${encodeURI(path)}`;
  a.textContent = path;
  return a;
}

/** `text` as nodes, entry paths in it as links. */
function linked(text) {
  return text.split(PATH).map((part, i) => (i % 2 === 1 ? entryLink(part) : document.createTextNode(part)));
}

/** The sections of a tier-3 or tier-4 answer ("Summary: …", "Details:" and so on). */
const SECTION = /^(Summary|Details|Sources|Gaps):\s*(.*)$/;

/** The answer's sections as headings, lists and paragraphs, entry paths as links. */
function renderAnswer(r) {
  const out = $('ask-answer');
  out.replaceChildren();
  if (!r.answer) {
    const p = document.createElement('p');
    p.className = 'hint';
    p.textContent = r.needsLLM ? 'No answer: the best entries are listed under the search box.' : r.reason;
    out.append(p);
  }
  let list = null;
  for (let line of (r.answer ?? '').split('\n')) {
    const section = line.match(SECTION);
    const item = line.match(/^\s*[-*]\s+(.*)$/);
    if (!item) list = null;
    if (section) {
      out.append(Object.assign(document.createElement('h4'), { textContent: section[1] }));
      line = section[2];
    }
    if (item) {
      if (!list) out.append((list = document.createElement('ul')));
      const li = document.createElement('li');
      li.append(...linked(item[1]));
      list.append(li);
    } else if (line.trim()) {
      const p = document.createElement('p');
      p.append(...linked(line));
      out.append(p);
    }
  }
  const sources = r.sources ?? [];
  $('ask-sources').replaceChildren(
    ...sources.map((path) => {
      const li = document.createElement('li');
      li.append(entryLink(path));
      return li;
    }),
  );
  $('ask-sources-block').hidden = sources.length === 0;
}
