// The convenience methods of ArborMemory (index.d.ts), written once on top
// of `call`, for the memory in this thread (index.js) and the one in a Web
// Worker (worker.js): both must offer exactly the same API. The methods
// that may need a model run the pending/resume loop here, in the calling
// thread, with the memory's or the call's LLM adapter (llm/drive.js).

import { ArborError } from './error.js';
import { drive } from './llm/drive.js';

/** @typedef {import('./index.d.ts').ArborMemory} ArborMemory */

/**
 * Base class of every ArborMemory: subclasses provide `call(method, params)`.
 *
 * JS cannot declare `call` abstract here, so each method takes `this` as
 * the whole ArborMemory it runs on (`@this`), and is typed as the
 * declaration's method (`@type`): tsc checks its parameters and its result
 * against index.d.ts.
 */
export class MemoryMethods {
  /** @type {import('./llm/index.d.ts').LLMAdapter | null} */
  #llm;

  /**
   * The version of each entry this memory's caller read or wrote, by path:
   * the base of its next operation on the entry that names none (docs/ABI.md
   * §4.2). A memory that watches its folder reads a person's edit before the
   * next call, so without the version the caller read, an UPDATE written
   * from it would replace the edit it never saw. The MCP server keeps the
   * same per session (host/mcp/bases.go), as many at most (maxBases).
   * @type {Map<string, string>}
   */
  #bases = new Map();

  /**
   * Remembers version v of the entry at p, the oldest forgotten past
   * maxBases (its operations fall back to the engine's own check).
   * @param {string} p
   * @param {string} v
   */
  #remember(p, v) {
    this.#bases.delete(p); // most recent last
    this.#bases.set(p, v);
    if (this.#bases.size > maxBases) this.#bases.delete(/** @type {string} */ (this.#bases.keys().next().value));
  }

  /** @param {import('./llm/index.d.ts').LLMAdapter | null | undefined} llm the default adapter of query, curateFrom and tidy */
  constructor(llm) {
    this.#llm = llm ?? null;
  }

  /** @this {ArborMemory & MemoryMethods} @type {ArborMemory['curate']} */
  curate(operations) {
    return this.#curate(Array.isArray(operations) ? operations : [operations]);
  }

  /** @this {ArborMemory & MemoryMethods} @type {ArborMemory['move']} */
  move(path, to, reason) {
    return this.#curate([{ type: 'MOVE', path, to, reason }]);
  }

  /**
   * curate with the bases of the entries read, remembering what it wrote.
   * @this {ArborMemory & MemoryMethods}
   * @param {import('./index.d.ts').Operation[]} operations
   * @returns {Promise<import('./index.d.ts').CurateResult>}
   */
  async #curate(operations) {
    const bases = this.#bases;
    const ops = operations.map((op) => {
      if (op === null || typeof op !== 'object' || String(op.type).toUpperCase() === 'ADD') return op;
      const out = { ...op };
      if (out.base === undefined && bases.has(entryKey(op.path))) out.base = bases.get(entryKey(op.path));
      if (String(op.type).toUpperCase() === 'MERGE' && out.targetBase === undefined && bases.has(entryKey(op.mergeTarget))) {
        out.targetBase = bases.get(entryKey(op.mergeTarget));
      }
      return out;
    });
    const res = /** @type {import('./index.d.ts').CurateResult} */ (await this.call('curate', { operations: ops }));
    res.applied.forEach((a, i) => {
      if (a.status !== 'success') return;
      if (a.type === 'DELETE') bases.delete(a.path);
      else if (a.type === 'MERGE') {
        bases.delete(a.path);
        if (a.version) this.#remember(entryKey(ops[i]?.mergeTarget), a.version);
      } else if (a.type === 'MOVE') {
        const v = bases.get(a.path);
        bases.delete(a.path);
        if (v && a.to?.endsWith('.md')) this.#remember(a.to, v);
      } else if (a.version) this.#remember(a.path, a.version);
    });
    return res;
  }

  /** @this {ArborMemory} @type {ArborMemory['recent']} */
  recent({ since, domain, limit, archived } = {}) {
    return this.call('recent', { since, domain, limit, archived });
  }

  /** @this {ArborMemory} @type {ArborMemory['context']} */
  context({ path, query, depth, budget, archived }) {
    return this.call('context', { path, query, depth, budget, archived });
  }

  /** @this {ArborMemory & MemoryMethods} @type {ArborMemory['tidy']} */
  tidy({ kinds, folder, apply, similarity, splitBytes, staleDays, archiveImportance, crowded, limit, llm = this.#llm, signal, onStep, tokenBudget, maxIterations } = {}) {
    const params = { kinds, folder, apply, similarity, splitBytes, staleDays, archiveImportance, crowded, limit };
    // Only an apply has merges written: a plan never needs the model.
    if (!llm || !apply) return this.call('tidy', params);
    return drive(this, 'tidy', { ...params, llm: true, tokenBudget, maxIterations }, { llm, signal, onStep });
  }

  /** @this {ArborMemory} @type {ArborMemory['status']} */
  status() {
    return this.call('status', {});
  }

  /** @this {ArborMemory} @type {ArborMemory['refresh']} */
  refresh(paths) {
    return this.call('refresh', paths === undefined ? {} : { paths });
  }

  /** @this {ArborMemory} @type {ArborMemory['search']} */
  search(query, { limit, ...filters } = {}) {
    return this.call('search', { query, limit, ...pickFilters(filters) });
  }

  /** @this {ArborMemory & MemoryMethods} @type {ArborMemory['query']} */
  query(query, { limit, llm = this.#llm, signal, onStep, tokenBudget, maxIterations, ...filters } = {}) {
    if (!llm) return this.call('query', { query, limit, ...pickFilters(filters) });
    return drive(this, 'query', { query, limit, llm: true, tokenBudget, maxIterations, ...pickFilters(filters) }, { llm, signal, onStep });
  }

  /** @this {ArborMemory & MemoryMethods} @type {ArborMemory['curateFrom']} */
  curateFrom(files, { llm = this.#llm, signal, onStep, instruction, tokenBudget, maxIterations } = {}) {
    if (!llm) {
      return Promise.reject(new ArborError('invalid_params', 'curateFrom: needs an LLM adapter (openMemory({ llm }) or the llm option)'));
    }
    let sources;
    try {
      sources = Array.from(files ?? [], sourceFile);
    } catch (err) {
      return Promise.reject(err);
    }
    return drive(this, 'curateFrom', { files: sources, instruction, tokenBudget, maxIterations }, { llm, signal, onStep });
  }

  /** @this {ArborMemory} @type {ArborMemory['ingest']} */
  ingest(files, { domain, contextTurns, maxSourceBytes, prune, keep, pruneEmpty, origins, relocated } = {}) {
    const list = Array.isArray(files) ? files : [files];
    return this.call('ingest', { files: list.map(wireFile), domain, contextTurns, maxSourceBytes, prune, keep, pruneEmpty, origins, relocated });
  }

  /** @this {ArborMemory & MemoryMethods} @type {ArborMemory['read']} */
  async read(path) {
    const res = /** @type {import('./index.d.ts').ReadResult} */ (await this.call('read', { path }));
    if (res.kind === 'entry' && res.version) this.#remember(res.path, res.version);
    return res;
  }

  /** @this {ArborMemory} @type {ArborMemory['tree']} */
  tree({ path, depth } = {}) {
    return this.call('tree', { path, depth });
  }

  /** @this {ArborMemory} @type {ArborMemory['stats']} */
  stats() {
    return this.call('stats');
  }

  /** @this {ArborMemory} @type {ArborMemory['flush']} */
  flush() {
    return this.call('flush');
  }
}

/**
 * A file as the engine takes it: text as `content`; bytes (a Uint8Array,
 * a Node Buffer, an ArrayBuffer) as base64 `data`, whose encoding the
 * engine detects (docs/ABI.md §4.11), so that decoding is done once, in
 * the engine, for every host.
 *
 * @param {{ name?: unknown, content?: unknown }} [f]
 * @returns {{ name: any, content?: any, data?: string }}
 */
function wireFile({ name, content } = {}) {
  if (content instanceof ArrayBuffer) content = new Uint8Array(content);
  return content instanceof Uint8Array ? { name, data: base64(content) } : { name, content };
}

/**
 * Bytes in base64, as JSON carries bytes to the engine (Go's []byte).
 *
 * @param {Uint8Array} bytes
 */
function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 0x8000)));
  }
  return btoa(s);
}

/**
 * A curateFrom file as the engine takes it (wireFile), its shape checked.
 *
 * @param {import('./index.d.ts').SourceFile} f
 * @param {number} i
 */
function sourceFile(f, i) {
  const w = wireFile(f);
  if (typeof w.name !== 'string' || (typeof w.content !== 'string' && w.data === undefined)) {
    throw new ArborError('invalid_params', `curateFrom: file ${i} must be { name: string, content: string | Uint8Array }`);
  }
  return w;
}

/**
 * The filters and sort of search and query that were given, as the engine
 * takes them (docs/ABI.md §4.3): nothing else of the options goes with them.
 *
 * @param {import('./index.d.ts').SearchFilters} f
 * @returns {import('./index.d.ts').SearchFilters}
 */
function pickFilters({ domain, topic, tags, since, until, maturity, minImportance, sort, archived }) {
  const all = { domain, topic, tags, since, until, maturity, minImportance, sort, archived };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
}

/** The versions a memory remembers at most: the Go host's bound per MCP session. */
const maxBases = 4096;

/**
 * A path as the engine names an entry file, for matching an operation's
 * path with one read: slashes, no leading `./` or `/`; '' when it is no
 * entry path (a folder and a title).
 * @param {unknown} p
 * @returns {string}
 */
function entryKey(p) {
  if (typeof p !== 'string') return '';
  const clean = p.trim().replace(/\\/g, '/').replace(/^(\.\/)+/, '').replace(/\/+/g, '/');
  return clean.endsWith('.md') ? clean : '';
}
