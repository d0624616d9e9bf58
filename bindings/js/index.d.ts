// Types of the Arbor JS package. The result shapes mirror
// core/api and docs/ABI.md §4; the package is plain ESM.

import type { Storage } from './storage/types.js';
import type { LLMAdapter, LLMRequest, LLMResponse } from './llm/index.js';

export type { Storage, StorageEntry } from './storage/types.js';
export { StorageError, type StorageErrorCode } from './storage/errors.js';
export { memory, type MemoryStorage } from './storage/memory.js';
export { nodeFs, type NodeStorage } from './storage/node.js';
export { indexedDB, deleteIndexedDB, type IndexedDBStorage } from './storage/indexeddb.js';
export {
  openaiCompatible, anthropic, adapterFromEnv, LLMError, PROVIDERS,
  type LLMAdapter, type LLMRequest, type LLMResponse, type LLMMessage, type LLMTool, type LLMToolCall,
  type LLMErrorCode, type AdapterOptions, type OpenAICompatibleOptions, type AnthropicOptions, type RetryInfo,
} from './llm/index.js';

/** The version of docs/ABI.md these bindings speak (1). */
export declare const ABI_VERSION: 8;

/** The package's release, as in its package.json (Arbor's `api.Version`). */
export declare const version: string;

/** Log levels of the engine's diagnostic lines. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** How far a long call has got (docs/ABI.md §2.2). */
export interface Progress {
  /** `read`: files of the tree read (`total` 0: not known); `write`: operations applied; `index`: documents indexed; `embed`: files embedded; `merge`: documents of the index's segments merged when it is saved. */
  phase: 'read' | 'write' | 'index' | 'embed' | 'merge';
  done: number;
  total: number;
}

/** Options of {@link openMemory}. */
export interface OpenOptions {
  /**
   * Where the memory root lives.
   * @default memory() — an empty in-memory root, lost on close
   */
  storage?: Storage;
  /**
   * The engine module: a URL, a path (Node) or URL string, the bytes, a
   * fetch `Response`, or a compiled `WebAssembly.Module` (fastest when
   * opening several memories).
   * @default the package's `dist/arbor.wasm` (compiled once per process)
   */
  wasm?: string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module;
  /**
   * Freezes the engine's clock (an RFC 3339 string or a Date), for
   * reproducible timestamps in tests and fixtures.
   * @default undefined — the real clock
   */
  fixedTime?: string | Date;
  /**
   * Files larger than this are skipped when the tree is read (reported in
   * `opened.warnings`) and refused on write.
   * @default 1048576 (1 MiB)
   */
  maxFileBytes?: number;
  /**
   * Tunes the knowledge lifecycle (docs/ABI.md §4.1): the weights of the
   * compound score and the batching of `.arbor/state.json` writes. Fields
   * left out keep their defaults.
   */
  lifecycle?: LifecycleOptions;
  /**
   * Receives the engine's diagnostic lines, and storage failures the host
   * reports as I/O errors.
   * @default lines of level "error" go to console.error, the others are dropped
   */
  onLog?: (level: LogLevel, message: string) => void;
  /**
   * Receives what the Go runtime writes to stdout/stderr (e.g. a panic's
   * trace), one line at a time.
   * @default console.error
   */
  onOutput?: (fd: 1 | 2, line: string) => void;
  /**
   * Receives how far a long call has got: reading and indexing the tree when
   * a memory opens without its saved index (a cold build), the operations of
   * a big curate or ingest and their indexing. Only runs of at least 200
   * units report, about once a percent, and a run ends with `done === total`;
   * at open, whose length is not known (`total` 0), a report comes each
   * thousand files read or documents indexed.
   */
  onProgress?: (progress: Progress) => void;
  /**
   * Called after the memory reloaded because another memory (another tab,
   * a worker, an extension's service worker) saved changes to the same
   * storage: what it shows may have changed. Only storages shared that way
   * (`indexedDB`) call it; a good moment to refresh what is on screen.
   */
  onExternalChange?: () => void;
  /**
   * Follow the files others change in the storage (an editor, git,
   * another process) for storages that report them (`nodeFs` watches its
   * folder): before each call the engine reads again what changed, so
   * answers and writes reflect what is on disk. `false` turns it off (call
   * `refresh()` yourself).
   * @default true
   */
  watch?: boolean;
  /**
   * The model for tiers 3–4 of `query`, for `curateFrom` and for the merges of `tidy({ apply: true })` (docs/llm.md):
   * `openaiCompatible(…)`, `anthropic(…)` or any {@link LLMAdapter}. Each
   * call may override it (`llm: false` turns it off for one call).
   * @default none — `query` stops at tier 2, `curateFrom` needs the option
   */
  llm?: LLMAdapter;
  /** Limits of the engine's model calls (docs/ABI.md §6), sent as open's `llm` parameter; fields left out keep their defaults. */
  llmOptions?: LLMOptions;
  /**
   * Grants the storage read-only (docs/sandbox.md): the host refuses every
   * write, the engine writes nothing (not even `.arbor/`: the index and
   * lifecycle signals live in memory), and `curate`, `ingest`, `curateFrom`
   * and `importFiles` reject with code `read_only`.
   * @default false
   */
  readOnly?: boolean;
  /**
   * Caps the engine's memory (docs/sandbox.md), written into the module
   * before it is compiled, so `wasm` must not be a compiled
   * `WebAssembly.Module`. A call that needs more rejects with code
   * `memory_limit`, and the memory reopens at the next call.
   * @default none — up to the 4 GiB a wasm memory can address
   */
  maxMemoryBytes?: number;
  /**
   * An embedding model (docs/js.md, "Embeddings"): `openaiEmbeddings(…)`,
   * `embeddingsFromEnv()` or any {@link Embedder}. The vectors of the
   * tree's files are kept in `.arbor/vectors.bin` and fused with BM25's
   * matches in `query`; a failing model is a warning, never a failed call.
   * @default none — BM25 and the evidence rules alone
   */
  embeddings?: Embedder;
  /**
   * What `sync` and `syncStatus` use to talk git (docs/sync.md):
   * `gitSync()` from `arbor-memory/sync`, which brings in isomorphic-git.
   * Kept out of the package's main entry so that a memory that never syncs
   * loads no git.
   * @default none — `sync` and `syncStatus` reject with `invalid_params`
   */
  git?: GitSync;
}

/**
 * What `sync` and `syncStatus` need of a sync adapter: `gitSync()` from
 * `arbor-memory/sync` makes one over isomorphic-git.
 */
export interface GitSync {
  sync(run: SyncRun, options?: SyncOptions): Promise<SyncReport>;
  status(run: SyncRun, options?: SyncStatusOptions): Promise<SyncStatus>;
}

/** What a memory hands its sync adapter while it holds its storage. */
export interface SyncRun {
  storage: Storage;
  /** The engine's `merge` method (docs/ABI.md §4.15), params and result as there (bytes in base64). */
  merge(params: { ours?: string; theirs?: string; taken?: string[]; files: { path: string; base: string | null; ours: string | null; theirs: string | null }[] }): Promise<{ files: (MergedFile & { content?: string })[]; conflicts: number }>;
  /** Collects the root's paths the sync wrote or removed, even when it fails: what the engine reads again. */
  changed: Set<string>;
}

/** Options of {@link ArborMemory.sync}. */
export interface SyncOptions {
  /**
   * The remote's URL (`https://…`); remembered as the root's `origin`, so
   * later syncs may leave it out. A browser reaches only remotes that
   * answer CORS requests, or goes through `corsProxy`.
   * @default the root's origin
   */
  remote?: string;
  /** @default the root's current branch, else `main` */
  branch?: string;
  /** A token, sent as the password of `username` (HTTP Basic), as GitHub, GitLab and Gitea take tokens. */
  auth?: { token: string; /** @default 'arbor' */ username?: string };
  /**
   * A CORS proxy for browsers (docs/sync.md, "From a browser"): the
   * remote's URL is requested through it (`${corsProxy}/${host and path}`).
   * It sees the token: use one you run for a private remote. Unneeded in
   * Node, and for a remote that sends CORS headers itself.
   */
  corsProxy?: string;
  /** Hears of each step of the sync as it starts. */
  onProgress?: (step: SyncStep) => void;
}

/** Options of {@link ArborMemory.syncStatus}. */
export interface SyncStatusOptions extends Pick<SyncOptions, 'branch' | 'auth' | 'corsProxy'> {
  /** Fetch first (needs the network); `false` compares with the remote as last fetched. @default true */
  fetch?: boolean;
}

/** One step of a sync as it starts: commit once, then fetch, merge and push in each round. */
export interface SyncStep {
  phase: 'commit' | 'fetch' | 'merge' | 'push';
  /** The round of fetch, merge and push, from 1 (0 for the commit); a push refused because the remote moved on starts another (3 at most). */
  round: number;
  message: string;
}

/** The result of the merge for one file both sides changed (docs/ABI.md §4.15). */
export interface MergedFile {
  path: string;
  status: 'ours' | 'theirs' | 'merged' | 'conflict' | 'kept' | 'deleted' | 'moved' | 'regenerated' | 'copy';
  message?: string;
  /** The parts in conflict. */
  conflicts?: string[];
  /** A move's old path, or the file a conflict copy is of. */
  from?: string;
}

/** What {@link ArborMemory.sync} did: the same report as `arbor sync --json`. */
export interface SyncReport {
  branch: string;
  /** The remote's URL, a password in it hidden. */
  remote: string;
  /** The commit of the root's own changes, when it had any. */
  committed?: string;
  /** The audited operations that commit's message lists. */
  operations: number;
  /** What bringing in the remote took: nothing new there, a fast-forward, a merge commit (`merged`), or nothing to bring (the remote had no such branch). */
  merge: 'none' | 'fast-forward' | 'merge' | 'initial';
  merged?: string;
  /** The commits the sync sent to the remote (the root's own and the merge's). */
  ahead: number;
  /** The commits the sync brought in from the remote. */
  behind: number;
  /** The files of the root the sync wrote or removed, sorted: the engine has read them again. */
  changed: string[];
  /** The merge's result for each file both sides changed (and its moves, regenerations and copies). */
  files?: MergedFile[];
  /** The files left in conflict (docs/sync.md, "Conflicts"). */
  conflicts: string[];
  pushed: boolean;
  /** The commit the branch is at after the sync. */
  head: string;
}

/** What {@link ArborMemory.syncStatus} says: the same as `arbor sync --status --json`. */
export interface SyncStatus {
  branch: string;
  remote?: string;
  /** Commits the local branch has that the remote's lacks, and the other way round, as of the last fetch. */
  ahead: number;
  behind: number;
  /** Whether this call fetched first. */
  fetched: boolean;
  /** The files changed since the last commit. */
  unsynced: string[];
  /** The operations audited since the last sync. */
  operations: number;
  /** When the last sync was (RFC 3339). */
  lastSync?: string;
}

/**
 * An embedding model behind the engine's synchronous `embed` import
 * (docs/ABI.md §2.3).
 */
export interface Embedder {
  /** The model's name, kept with the vectors: another name embeds the tree again. Empty turns embeddings off. */
  readonly model: string;
  /** One vector per text, in order; throws (an {@link LLMError}, or anything with `code` and `message`) when the call fails. */
  embedSync(texts: string[]): number[][];
  /** Releases what the embedder holds (Node's worker thread). */
  close?(): void;
}

/** Options of {@link openaiEmbeddings}: an OpenAI-compatible `/embeddings` endpoint. */
export interface OpenAIEmbeddingsOptions {
  /** @default 'openai', or 'openai-compatible' when `baseURL` is given */
  provider?: import('./llm/index.js').OpenAIProvider;
  /** The embedding model, as the provider spells it (required): `text-embedding-3-small`, `nomic-embed-text`, … */
  model: string;
  apiKey?: string;
  /** @default the provider's */
  baseURL?: string;
  headers?: Record<string, string>;
  /** Bounds each attempt. @default 30000 */
  timeoutMs?: number;
  /** Retries of a 429, a 5xx, a timeout or a broken connection. @default 1 */
  maxRetries?: number;
  /** Node only: the backoff between retries, as {@link AdapterOptions.backoff}. */
  backoff?: { baseMs?: number; maxMs?: number };
}

/**
 * An {@link Embedder} for an OpenAI-compatible `/embeddings` endpoint. In
 * Node a worker thread makes the calls while the engine waits; in pages
 * and workers a synchronous XMLHttpRequest does (retried at once, without
 * backoff; without a timeout in a page).
 */
export declare function openaiEmbeddings(options: OpenAIEmbeddingsOptions): Embedder;

/**
 * The embedder the environment describes (`ARBOR_EMBED_PROVIDER`,
 * `ARBOR_EMBED_BASE_URL`, `ARBOR_EMBED_MODEL`, `ARBOR_EMBED_API_KEY`,
 * `ARBOR_EMBED_TIMEOUT`, `ARBOR_EMBED_MAX_RETRIES`, as the Go host reads
 * them), or null when no provider is named (or it is `none`).
 */
export declare function embeddingsFromEnv(env?: Record<string, string | undefined>): Embedder | null;

/** Open's `llm` parameter (docs/ABI.md §6). */
export interface LLMOptions {
  /** How long a pending call waits for its answer before it expires. */
  continuationSeconds?: number;
  /** How many calls may wait on a model at once. */
  maxContinuations?: number;
  /** Default token budget of a query's model calls, and of a curateFrom's. */
  tokenBudget?: number;
  curateTokenBudget?: number;
  /** Model calls an agentic loop may make (at most 50). */
  maxIterations?: number;
  /** The top score from which a query tries tier 3 before tier 4. */
  tier3MinScore?: number;
}

/** Options of the calls that may need a model: {@link ArborMemory.query}, {@link ArborMemory.curateFrom} and {@link ArborMemory.tidy}. */
export interface LLMCallOptions {
  /** The adapter for this call; false answers without a model. @default the memory's (openMemory's `llm`) */
  llm?: LLMAdapter | false;
  /** Aborting cancels the pending model call and the engine's continuation: the tree is left as it was. */
  signal?: AbortSignal;
  /** Called after each model call, with the request and the answer (or the error passed to the engine). */
  onStep?: (step: LLMStep) => void;
  /** Bounds the tokens of all this call's model calls. @default the engine's */
  tokenBudget?: number;
  /** Bounds this call's model calls (1 to 50). @default the engine's */
  maxIterations?: number;
}

/** One model call made for a pending result, as {@link LLMCallOptions.onStep} sees it. */
export interface LLMStep {
  step: number;
  request: LLMRequest;
  response?: LLMResponse;
  error?: { code: string; message: string };
}

/** The engine's trace of a call's model calls. */
export interface LLMTrace {
  steps: LLMTraceStep[];
  inputTokens: number;
  outputTokens: number;
  /** Some step had no token counts from the provider and was estimated (4 characters a token). */
  estimated?: boolean;
}

export interface LLMTraceStep {
  step: number;
  /** What the call was for: tier3, tier4, compact1, compact2, curate, tidy. */
  purpose: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  model?: string;
  /** The tools the model called in this step. */
  toolCalls?: string[];
  /** The error code and message when the call failed. */
  error?: string;
}

/** A raw file for {@link ArborMemory.curateFrom}: text, or bytes whose encoding the engine detects (as for {@link IngestFile}). */
export interface SourceFile {
  name: string;
  content: string | Uint8Array | ArrayBuffer;
}

/** The answer of {@link ArborMemory.curateFrom}. */
export interface CurateFromResult {
  /** What was written to the tree when the loop ended. */
  applied: AppliedOperation[];
  summary: CurateResult['summary'];
  /** Every operation the model proposed, failures included, with the turn that proposed it. */
  attempts: (AppliedOperation & { turn: number; refused?: boolean })[];
  files: { name: string; chars: number; droppedLines?: number }[];
  /** How large material was reduced first (pass 1 summary, 2 aggressive summary, 3 truncation). */
  compaction?: { inputChars: number; outputChars: number; pass: 1 | 2 | 3; notes?: string[] };
  /** The model's closing words. */
  message?: string;
  reason: string;
  llm: LLMTrace;
  tookMs: number;
}

/** The lifecycle open parameters (docs/ABI.md §4.1); defaults in brackets. */
export interface LifecycleOptions {
  /** Importance of a new entry [50]. */
  initialImportance?: number;
  /** Importance added per access [3] and per update [5]. */
  accessBonus?: number;
  updateBonus?: number;
  /** Importance is multiplied by this per day without activity [0.995]. */
  dailyDecay?: number;
  /** Maturity thresholds: draft → validated at ≥ [65], back below [35]; validated → core at ≥ [85], back below [60]. */
  promoteValidated?: number;
  demoteDraft?: number;
  promoteCore?: number;
  demoteValidated?: number;
  /** τ of recency r = exp(−days since update / τ) [30]. */
  recencyDays?: number;
  /** Compound score = (relevance·s/s_top + importance·ι/100 + recency·r), s/s_top the raw BM25 score relative to the best hit, × the tier's boost [0.6, 0.2, 0.2]. */
  relevanceWeight?: number;
  importanceWeight?: number;
  recencyWeight?: number;
  /** Boosts by maturity [1.15, 1.0, 0.85]. */
  coreBoost?: number;
  validatedBoost?: number;
  draftBoost?: number;
  /** Pending signal changes that trigger a write of state.json [64]. */
  flushAfter?: number;
  /** Minutes after which pending changes are written at the next call; 0 turns this off [5]. */
  flushMinutes?: number;
}

export type Maturity = 'draft' | 'validated' | 'core';

/**
 * The filters and sort of {@link ArborMemory.search} and {@link ArborMemory.query} (docs/ABI.md §4.3).
 * Filters run inside the index: the best N results are the best N of what they keep.
 */
export interface SearchFilters {
  /** Only files of this domain (the first folder), e.g. `engineering`. */
  domain?: string;
  /** Only files of this topic (the second folder): its name, or `domain/topic`. */
  topic?: string;
  /** Only entries carrying every one of these tags (case-insensitive). */
  tags?: string[];
  /** Only entries changed (updatedAt, else createdAt) since a span back (`30m`, `12h`, `7d`, `2w`), a date or an RFC 3339 time. */
  since?: string;
  /** Only entries changed up to a span back, a date (kept whole) or an RFC 3339 time. */
  until?: string;
  /** Only entries at one of these lifecycle tiers, as of the call. */
  maturity?: Maturity[];
  /** Only entries whose importance (0 to 100, as of the call) is at least this. */
  minImportance?: number;
  /** Order of the results: by relevance, or by the key, ties by relevance. @default 'relevance' */
  sort?: 'relevance' | 'recent' | 'importance';
  /** Include the entries under `_archive/` ({@link ArborMemory.tidy}), left out by default. */
  archived?: boolean;
}

/** What the lifecycle says about one result of {@link ArborMemory.query}. */
export interface LifecycleRank {
  /** ι ∈ [0, 100] as of the query, 4 decimals. */
  importance: number;
  maturity: Maturity;
  /** exp(−days since the entry's last update / 30); 0 when it has no date. */
  recency: number;
  /** The compound score the query's results are ordered by. */
  score: number;
}

/** Something in the tree the engine could not use, or that another file system could not hold (docs/ABI.md §4.1). Nothing is changed on disk. */
export interface Warning {
  /**
   * `file`: a file of the tree that cannot be used (too large, unreadable, not parseable), left as it is;
   * `state`: `.arbor/state.json` could not be used and the lifecycle signals start afresh;
   * `twins`: names in one folder that differ only in case or Unicode form, which Windows and macOS hold as one;
   * `interrupted`: a curate operation a killed process left without its audit line, now recorded as the files show it;
   * `conflict`: a file in which a sync's merge kept both versions of what two sides changed differently, in a
   * `## Merge Conflict` section; an UPDATE of the entry resolves it (docs/sync.md).
   */
  kind: 'file' | 'state' | 'twins' | 'interrupted' | 'conflict';
  path: string;
  message: string;
  /** For `twins`: every path of the group, sorted (`path` is the first). */
  paths?: string[];
}

/** What `refresh` found (docs/ABI.md §4.12). */
export interface RefreshResult {
  /** The whole tree was listed. */
  scanned: boolean;
  /** Files read again because they changed on disk (or were reported). */
  checked: number;
  added: number;
  updated: number;
  removed: number;
  /** The files added, updated and removed, sorted; absent when none. */
  paths?: string[];
  tookMs: number;
}

/** What `open` found (docs/ABI.md §4.1). */
export interface OpenResult {
  entries: number;
  contexts: number;
  warnings: Warning[];
  /** How the persisted search index (`.arbor/index`) was brought in step with the tree. */
  index: {
    /** Documents taken unchanged from the persisted index. */
    reused: number;
    /** Documents analyzed: new or changed since it was persisted (all of them on a rebuild). */
    indexed: number;
    /** Documents dropped: deleted from the tree (or no longer parseable) since. */
    removed: number;
  };
  /** Present when the host has an embedding model (docs/ABI.md §2.3). */
  embeddings?: {
    model: string;
    /** 0 until a vector was made. */
    dims: number;
    /** Files with a vector of their current text. */
    vectors: number;
    /** Files embedded by this open. */
    embedded: number;
    /** Files left without a vector (a failed call): found by BM25 alone until the next write or open. */
    missing: number;
  };
}

/** A list of strings; a single string is accepted too (split on commas and newlines). */
export type StringList = string[] | string;

/** `content.rawConcept` of an operation. */
export interface RawConcept {
  task?: string;
  changes?: string;
  /** A list of paths, or one string of them. */
  files?: StringList;
  flow?: string;
  timestamp?: string;
  author?: string;
}

/** A narrative part: text, or lines that are joined with newlines. */
export type NarrativeText = string | string[];

/** A structured `content.narrative`. */
export interface Narrative {
  text?: NarrativeText;
  structure?: NarrativeText;
  dependencies?: NarrativeText;
  highlights?: NarrativeText;
  rules?: NarrativeText;
  examples?: NarrativeText;
  diagrams?: NarrativeText;
}

/** One fact of an entry; a plain string is taken as the statement. */
export type Fact = string | { subject?: string; statement: string; category?: string };

/** What an operation writes into an entry. Every field is optional. */
export interface OperationContent {
  rawConcept?: RawConcept;
  /** Free prose, or the parts of a structured narrative. */
  narrative?: string | Narrative;
  facts?: Fact[];
  snippets?: StringList;
  /** Entry paths this entry relates to. */
  relations?: StringList;
  tags?: StringList;
  keywords?: StringList;
}

/** One curation operation (docs/ABI.md §4.2). */
export interface Operation {
  /** The operation (case-insensitive). */
  type: OperationType | Lowercase<OperationType>;
  /** A folder `domain/topic[/subtopic]` (the file name comes from the title) or a full entry path ending in `.md`. For MERGE and MOVE: the source (MOVE: an entry or a folder). */
  path: string;
  /** The entry's title; DELETE without a title removes the folder's entries and context files (files the engine does not read stay). */
  title?: string;
  summary?: string;
  /** The knowledge to write; a plain string is taken as the narrative. */
  content?: OperationContent | string;
  /** Why: recorded in the entry and in the audit log. Required. */
  reason: string;
  /** MERGE only: the entry that survives. */
  mergeTarget?: string;
  /**
   * MOVE only: for an entry, the folder it moves into (keeping its file name) or its new path ending in
   * `.md`; for a folder, an existing folder it moves into, else its new path. MOVE takes no content.
   */
  to?: string;
  /**
   * The version of the entry at `path` this operation was made from ({@link ReadResult.version}, or an
   * earlier {@link AppliedOperation.version}): when the file holds another version now (a person's
   * edit, another writer's), the operation is a `conflict` and writes nothing. Not for ADD or a folder.
   */
  base?: string;
  /** MERGE only: `base` for the `mergeTarget`. */
  targetBase?: string;
}

/** The six curation operations. */
export type OperationType = 'ADD' | 'UPDATE' | 'UPSERT' | 'MERGE' | 'DELETE' | 'MOVE';

/** The outcome of one operation. */
export interface AppliedOperation {
  type: OperationType;
  /** The entry (or folder) the operation touched. */
  path: string;
  /** `conflict`: the file changed on disk since the memory read it, in a way the operation cannot be applied to; nothing was written (it counts as failed). */
  status: 'success' | 'failed' | 'conflict';
  /** What happened ("added", "updated existing", …) or why it failed. */
  message: string;
  /** UPDATE: what was carried over from the old entry instead of dropped, e.g. "relations", "narrative.rules". */
  carried?: string[];
  /** DELETE: entries that still point at what was removed. */
  brokenRelations?: string[];
  /** MOVE: where `path` went (the entry's or the folder's new path). */
  to?: string;
  /** ADD, UPDATE, UPSERT, MERGE: the version of the entry written (a MERGE's target), the `base` of a next operation made from it. */
  version?: string;
}

/** The answer of {@link ArborMemory.curate}. A failed operation is reported here; it does not reject. */
export interface CurateResult {
  applied: AppliedOperation[];
  summary: { added: number; updated: number; merged: number; deleted: number; moved: number; failed: number };
}

/** Options of {@link ArborMemory.recent}. */
export interface RecentOptions {
  /** Only what changed within a span back from now (`30m`, `12h`, `7d`, `2w`) or since a date (`2026-03-01`) or an RFC 3339 time. */
  since?: string;
  /** Only entries under this folder: a domain, or a folder below one. */
  domain?: string;
  /** At most this many entries, 1 to 100 (default 20). */
  limit?: number;
  /** Include the entries under `_archive/` ({@link ArborMemory.tidy}), left out by default. */
  archived?: boolean;
}

/** One entry of {@link RecentResult}. */
export interface RecentEntry {
  path: string;
  title: string;
  summary?: string;
  /** When the entry last changed (RFC 3339). */
  changed: string;
  /** What says so: the front matter's dates, or the file's modification time. */
  changedFrom: 'frontMatter' | 'file';
}

/** The answer of {@link ArborMemory.recent}: newest first, equal times by path. */
export interface RecentResult {
  entries: RecentEntry[];
  /** Every entry that matched, before the limit. */
  total: number;
  /** The time `since` named, when given (RFC 3339). */
  since?: string;
  tookMs: number;
}

/** The answer of {@link ArborMemory.status}. */
export interface StatusResult {
  entries: number;
  contexts: number;
  domains: Record<string, number>;
  maturity: Record<Maturity, number>;
  /** What the scan found changed on disk since the memory read the tree (now taken in). */
  changed: RefreshResult;
  /** How the open brought the persisted index in step: what changed since the index was written. */
  index: { reused: number; indexed: number; removed: number };
  /** Index changes held in memory, not yet written (flush and close write them). */
  unflushed: number;
  /** Entries changed in the last 7 days. */
  recent: number;
  /** The newest change (RFC 3339). */
  lastChanged?: string;
  /** Upkeep suggestions that need no entry read: stale entries to archive and crowded topics ({@link ArborMemory.tidy} finds near-duplicates and oversized entries too). */
  upkeep: number;
  warnings: Warning[];
  /** No warnings. */
  healthy: boolean;
}

/** A kind of upkeep suggestion of {@link ArborMemory.tidy}. */
export type TidyKind = 'merge' | 'split' | 'archive' | 'crowded';

/** Options of {@link ArborMemory.tidy} (docs/ABI.md §4.17). */
export interface TidyOptions {
  /** Which suggestions (default all): near-duplicates, oversized entries, stale entries, crowded topics. */
  kinds?: TidyKind[];
  /** Only the entries under this folder. */
  folder?: string;
  /** Apply the plan through curate (default: return it only). */
  apply?: boolean;
  /** Near-duplicates from this word-shingle Jaccard similarity, 0.5 to 1 (default 0.8). */
  similarity?: number;
  /** Split entries whose file is over this many bytes (default 8192, at least 1024). */
  splitBytes?: number;
  /** Archive drafts unchanged and unused for this many days (default 180). */
  staleDays?: number;
  /** Archive drafts of importance at most this (default: the initial importance, 50). */
  archiveImportance?: number;
  /** Propose subtopics for topics holding more than this many entries directly (default 40). */
  crowded?: number;
  /**
   * How many suggestions the result holds, the first in the plan's order (default 200; 0: all of them). Given with
   * `apply`, only those are applied; without a limit `apply` applies the whole plan.
   */
  limit?: number;
}

/**
 * Options of {@link ArborMemory.tidy}: with `apply` and an LLM adapter (the memory's or `llm`), the model writes each
 * merged entry, one call per group of duplicates (docs/ABI.md §6.7); `llm: false` merges deterministically. A plan
 * without `apply` never calls the model.
 */
export type TidyCallOptions = TidyOptions & LLMCallOptions;

/** One suggestion of a tidy plan: the curate operations that carry it out, and why. */
export interface TidySuggestion {
  kind: TidyKind;
  /** merge: the entry kept, then those merged into it; split: the entry, then its new parts; archive: the entry; crowded: the topic. */
  paths: string[];
  reason: string;
  /** merge: the lowest similarity of a merged entry with the one kept. */
  similarity?: number;
  operations: Operation[];
  /** merge applied with a model: who wrote the merged text, the model or tidy's deterministic merge (when the model's could not be used). */
  mergedBy?: 'model' | 'tidy';
  /** Why the model's merge was not used; the deterministic merge was applied instead. */
  warning?: string;
}

/** The answer of {@link ArborMemory.tidy}. */
export interface TidyResult {
  /** The plan's first suggestions, at most `limit`. */
  suggestions: TidySuggestion[];
  /** Every suggestion of the plan by kind, for every kind asked for, those the limit left out included. */
  counts: Partial<Record<TidyKind, number>>;
  /** How many suggestions of the plan the limit left out of `suggestions`. */
  omitted?: number;
  /** The entries the plan looked at. */
  entries: number;
  /**
   * With `apply`: curate's result, the outcomes of the operations of `suggestions` in the plan's order, and the
   * summary of every operation applied (those of suggestions left out of the result too, when no limit was given).
   */
  applied?: CurateResult;
  /** Operations of a split that failed part-way, undone so that the entry stays whole. */
  undone?: number;
  /** The model calls of an apply whose merges the model wrote. */
  llm?: LLMTrace;
  tookMs: number;
}

/** Options of {@link ArborMemory.context}: exactly one of `path` and `query`. */
export interface ContextOptions {
  /** The entry to start from, matched as {@link ArborMemory.read} matches a path. */
  path?: string;
  /** Instead of `path`: the entry a search ranks first (at most 4,096 bytes). */
  query?: string;
  /** How many links away to go, 0 to 3 (default 1; 0: the entry alone). */
  depth?: number;
  /** The most tokens the markdown may take, 100 to 200,000 (default 2,000), estimated at 4 characters a token. */
  budget?: number;
  /** Reach the entries under `_archive/` ({@link ArborMemory.tidy}) too, left out by default. */
  archived?: boolean;
}

/** One entry of {@link ContextResult}, in the order of the walk. */
export interface ContextEntry {
  path: string;
  title: string;
  /** Links away from the entry asked for (0 for it). */
  depth: number;
  /** The entry that led to this one (absent at depth 0). */
  via?: string;
  /** `relation`: `via` relates to this entry; `backlink`: this entry links to `via`. */
  link?: 'relation' | 'backlink';
  /** How it is in the markdown: whole, cut to the budget (the entry asked for only), by its title, path and summary, or not at all. */
  included: 'full' | 'truncated' | 'summary' | 'omitted';
  /** Why not whole: over the budget left, or its file could not be read. */
  reason?: 'budget' | 'unreadable';
  /** The estimated tokens of its part of the markdown (0 when omitted). */
  tokens: number;
  /** The estimated tokens the whole entry would take. */
  fullTokens: number;
}

/** The answer of {@link ArborMemory.context}. */
export interface ContextResult {
  /** The entry the context is built around: the one asked for, or the best match of the query. */
  path: string;
  query?: string;
  /** One `# Title` part per entry that got in, in the walk's order, ready for a prompt. */
  markdown: string;
  /** The markdown's estimated tokens, at most `budget`. */
  tokens: number;
  budget: number;
  depth: number;
  /** Every entry the walk reached, those cut included. */
  entries: ContextEntry[];
  tookMs: number;
}

/** One ranked result. */
export interface SearchHit {
  path: string;
  /** `context` for a `context.md` file. */
  kind: 'entry' | 'context';
  title: string;
  /** The entry's front-matter summary; left out when empty. */
  summary?: string;
  /** Normalized ŝ = s/(1+s) of the BM25 score, 4 decimals. */
  score: number;
  excerpt: string;
  /** Set by {@link ArborMemory.query} only. */
  lifecycle?: LifecycleRank;
}

/** The answer of {@link ArborMemory.search}. */
export interface SearchResult {
  query: string;
  results: SearchHit[];
  total: number;
  tookMs: number;
}

/** The answer of {@link ArborMemory.query}: which tier answered, with what, and why it stopped there. */
export interface QueryResult {
  query: string;
  /** 0 exact cache, 1 fuzzy cache, 2 direct answer (docs/ABI.md §4.4). Results are ordered by `lifecycle.score`, entries before contexts, a direct answer's entry first. */
  tier: number;
  tierName: string;
  /** The direct answer; empty when `needsLLM`. */
  answer: string;
  results: SearchHit[];
  reason: string;
  /** No tier could answer without a model: `results` are the best entries. */
  needsLLM: boolean;
  /** The query's significant terms match nothing stored. */
  outOfDomain: boolean;
  tookMs: number;
  /** Tiers 3–4: the entries the model's answer cites, each one it was shown. */
  sources?: string[];
  /** Tier 4 ended (budget, iterations, a failed call) before a final answer; `answer` lists the entries it read. */
  incomplete?: boolean;
  /** The model calls, when there were any. */
  llm?: LLMTrace;
}

/** The answer of {@link ArborMemory.read}: one entry or context file with its relations. */
export interface ReadResult {
  path: string;
  kind: 'entry' | 'context';
  title: string;
  summary: string;
  tags: string[];
  keywords: string[];
  /** RFC 3339, when the entry has it. */
  createdAt?: string;
  updatedAt?: string;
  /** Forward links (entry paths). */
  relations: string[];
  backlinks: string[];
  /** The file as stored. */
  markdown: string;
  /** Names the file's bytes as read: give it as an operation's `base` to write only if no one changed it since. */
  version: string;
}

/** One folder or entry of {@link ArborMemory.tree}. */
export interface TreeNode {
  name: string;
  path: string;
  /** `root` for the tree of the whole memory (name and path empty). */
  kind: 'root' | 'domain' | 'topic' | 'subtopic' | 'folder' | 'entry';
  title?: string;
  children?: TreeNode[];
}

/** The answer of {@link ArborMemory.stats}. */
export interface StatsResult {
  entries: number;
  contexts: number;
  /** Entries per domain. */
  domains: Record<string, number>;
  relations: number;
  /** Entries per lifecycle tier. */
  maturity: Record<Maturity, number>;
  warnings: Warning[];
}

/** The answer of {@link ArborMemory.flush}. */
export interface FlushResult {
  /** Whether state.json was written: false when no lifecycle signal changed since the last write. */
  written: boolean;
  /** Entries with recorded lifecycle signals. */
  entries: number;
}

/** One file for {@link ArborMemory.ingest}. */
export interface IngestFile {
  /** A relative path, e.g. `notes/deploy.md`: the source's identity, its format (by extension) and its topic. */
  name: string;
  /**
   * The file's text, or its bytes as read (a `Uint8Array`, a Node `Buffer`, an `ArrayBuffer`): the engine
   * detects their encoding — UTF-8, UTF-16 with a byte-order mark, else Windows-1252 (which reads Latin-1) —
   * and fails a file that is no text in them, with the reason (docs/ABI.md §4.11).
   */
  content: string | Uint8Array | ArrayBuffer;
}

/** Options of {@link ArborMemory.ingest} (docs/ABI.md §4.11). */
export interface IngestOptions {
  /** Put every entry under this domain instead of the derived one (`documents`, `data`, `mail`, `calendar`, `code`, `chats`, a conversation's participants). */
  domain?: string;
  /** Chats between people: preceding turns carried in each turn's entry. @default 2 */
  contextTurns?: number;
  /** A larger file fails. @default 8388608 */
  maxSourceBytes?: number;
  /**
   * Source-name prefixes to mirror, e.g. `['notes/']` (`''` is every source): an ingested source whose
   * name starts with one of them and that is neither among `files` nor in `keep` is removed — its
   * entries deleted (never one the user wrote or edited, nor another source's), its record dropped.
   */
  prune?: string[];
  /** Sources that still exist though this call does not send them (a folder sent in several calls: prune with the last one, keep the others). */
  keep?: string[];
  /**
   * Let a `prune` prefix under which the call sends no file and keeps none remove every source under it.
   * Without it such a prefix removes nothing and `warnings` says so (`empty_prune`): an empty folder is
   * more often a share not mounted or a sync not done than a folder emptied on purpose. @default false
   */
  pruneEmpty?: boolean;
  /**
   * Where the files under each source-name prefix come from, e.g. `{ 'notes/': '/home/ana/notes' }` (an
   * opaque string, compared only). The memory records a prefix's origin the first time; a call giving
   * another one fails its files under that prefix and refuses its prunes that reach it (`other_origin`),
   * so that two folders of one name never overwrite or prune each other's entries.
   */
  origins?: Record<string, string>;
  /** The folders of `origins` moved: their origins replace those recorded for their prefixes instead of clashing with them. */
  relocated?: boolean;
}

/** Something an ingest call was asked and left undone, without a file failing for it. */
export interface IngestWarning {
  /** `empty_prune`: a `prune` prefix the call sent and kept nothing under, left alone without `pruneEmpty`; `other_origin`: a prefix recorded with another origin (`origin`), whose files failed and whose prune was refused. */
  code: 'empty_prune' | 'other_origin';
  /** The prefix of the call it is about. */
  prefix: string;
  /** For `other_origin`, the origin the memory records. */
  origin?: string;
  /** The sources recorded under the prefix that the call left as they are. */
  sources: number;
  message: string;
}

/** What ingesting one file did. */
export interface IngestFileResult {
  name: string;
  format: 'markdown' | 'text' | 'json' | 'jsonl' | 'csv' | 'tsv' | 'email' | 'calendar' | 'go' | 'javascript' | 'python' | 'chat';
  /** `added`: a source not seen before; `unchanged`: nothing was written; `removed`: a source pruned (its entries `deleted`); `failed`: see `message`. */
  status: 'added' | 'updated' | 'unchanged' | 'removed' | 'failed';
  message?: string;
  /** What of the file was read otherwise than written: a note's front matter that does not parse, kept in its text. */
  warnings?: string[];
  /** Entries the file makes (0 for a removed source). */
  entries: number;
  added: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
  /** One item per curate operation applied for the file. */
  applied: AppliedOperation[];
}

/** The answer of {@link ArborMemory.ingest}. A file that fails is reported here; it does not reject. */
export interface IngestResult {
  /** The call's files in order, then the sources `prune` removed. */
  files: IngestFileResult[];
  /** `files` counts the items of `files`; `removed` (present when not 0) those removed by `prune`. */
  summary: { files: number; failedFiles: number; removed?: number; added: number; updated: number; deleted: number; unchanged: number; failed: number };
  /** What the call left undone (a prune of an empty prefix, a prefix of another origin); absent when nothing was. */
  warnings?: IngestWarning[];
  tookMs: number;
}

/**
 * An open memory root. Calls are queued and run one at a time, in order;
 * each returns a promise that rejects with an {@link ArborError}.
 */
export interface ArborMemory {
  /** What the tree held when it was opened. */
  readonly opened: OpenResult;
  /**
   * Applies operations in order (a single operation is accepted too). An operation on an entry this
   * memory read (or wrote) and that names no `base` is given the version read as its base: it is a
   * `conflict`, writing nothing, if it would replace what a person (or another writer) changed since.
   */
  curate(operations: Operation[] | Operation): Promise<CurateResult>;
  /**
   * Moves an entry or a folder (a MOVE operation): links that named it by its path are rewritten in the
   * same step. `to` is a folder the entry moves into, or its new path ending in `.md`; a folder moves into
   * `to` when that folder exists, else it is renamed to `to`. A failed move is reported in the result
   * and changes nothing.
   */
  move(path: string, to: string, reason: string): Promise<CurateResult>;
  /**
   * The entries changed lately, newest first: by updatedAt (else createdAt) from the front matter, or the
   * file's modification time for a note without dates.
   */
  recent(options?: RecentOptions): Promise<RecentResult>;
  /**
   * An entry (by path, or the best match of a query) with the entries it relates to and those linking to it,
   * breadth-first up to `depth` links away, as markdown for a prompt within a token `budget`: each entry whole
   * while the budget holds it, else by its summary, else left out (`entries` says which and why).
   */
  context(options: ContextOptions): Promise<ContextResult>;
  /** The memory at a glance, after a scan for what changed on disk: counts, what changed, health. */
  status(): Promise<StatusResult>;
  /**
   * Plans the upkeep of the memory (docs/ABI.md §4.17): near-duplicates to merge, entries over a size limit
   * to split, stale low-importance drafts to move under `_archive/`, crowded topics to divide, each with its
   * reason and curate operations. Nothing is written unless `apply` is set; then each suggestion is applied
   * in order, stopping at its first failed operation. With `apply` and an LLM adapter, the model writes each
   * merged entry (an answer that drops a fact or is no entry leaves that merge deterministic, with a
   * `warning`); nothing is written until it is done, and aborting leaves the tree unchanged.
   */
  tidy(options?: TidyCallOptions): Promise<TidyResult>;
  /**
   * Splits files into entries (a markdown note whole, keeping its folders, front matter, headings and links; text by paragraph, JSON/JSONL by record, CSV/TSV by
   * row, .eml, .ics, Go/JS/TS/Python by top-level symbol, chat transcripts by turn or session) and
   * writes them through curate. Re-ingesting an unchanged file writes nothing; a changed one updates
   * only the entries whose pieces changed; with `prune`, the sources no longer sent are removed.
   */
  ingest(files: IngestFile[] | IngestFile, options?: IngestOptions): Promise<IngestResult>;
  /**
   * Reads again the files others changed (paths of files or folders), or, without paths, lists the
   * whole tree and reads the files whose size or time moved (docs/ABI.md §4.12). A memory on a
   * watched storage does this itself before each call.
   */
  refresh(paths?: string[]): Promise<RefreshResult>;
  /** Ranked full-text results. A query holds at most 4,096 bytes of UTF-8; a longer one rejects with `invalid_params`. */
  search(query: string, options?: SearchFilters & { /** @default 10, at most 100 */ limit?: number }): Promise<SearchResult>;
  /**
   * Tiered retrieval: an answer without a model when tiers 0–2 can give
   * one; otherwise, with an LLM adapter, tier 3 (one call over the best
   * entries) and tier 4 (an agentic loop over the tree's tools), the model
   * calls made behind this one promise. A query holds at most 4,096 bytes
   * of UTF-8; a longer one rejects with `invalid_params`. A filtered or
   * sorted query is never answered from, or kept in, the caches.
   */
  query(query: string, options?: LLMCallOptions & SearchFilters & { /** @default 5 */ limit?: number }): Promise<QueryResult>;
  /**
   * Turns raw material (at most 5 files, 40,000 characters each) into
   * entries through the model: it proposes operations, sees each one's
   * result and may fix failed ones; nothing is written until it is done,
   * and aborting leaves the tree unchanged. Needs an LLM adapter.
   */
  curateFrom(files: Iterable<SourceFile>, options?: LLMCallOptions & { /** What the model should focus on. */ instruction?: string }): Promise<CurateFromResult>;
  /**
   * One entry or context file, e.g. `engineering/billing/invoice_retry_policy.md`. The memory remembers
   * the entry's `version` as the base of its next operation on it (see {@link ArborMemory.curate}).
   */
  read(path: string): Promise<ReadResult>;
  /** The tree below `path` (default: the root), `depth` levels deep (default: all). */
  tree(options?: { path?: string; depth?: number }): Promise<TreeNode>;
  /** Counts of what the tree holds. */
  stats(): Promise<StatsResult>;
  /** Writes the search index's changes to `.arbor/index` and pending lifecycle signals to `.arbor/state.json` now (close does it too), so the next open re-analyzes nothing that is unchanged. */
  flush(): Promise<FlushResult>;
  /** Every file of the root (`.arbor/` included), its content as bytes, e.g. to save it as a folder or a zip (folder.js). */
  exportFiles(): Promise<(TreeFile & { data: Uint8Array })[]>;
  /**
   * Adds the markdown files of a folder to the tree and reopens it. Never
   * replaces a file: what is not imported is listed with the reason.
   */
  importFiles(files: Iterable<TreeFile>): Promise<ImportReport>;
  /**
   * Shares the root through git (docs/sync.md): commits its changes, fetches the branch, merges it
   * (the engine's merge, entry by entry), pushes, then reads again the files the sync changed. Needs
   * the `git` option (`gitSync()` from `arbor-memory/sync`). A failure rejects with code `sync`; the
   * files it changed before it failed are read again all the same.
   */
  sync(options?: SyncOptions): Promise<SyncReport>;
  /** How the root stands against its remote: ahead/behind, what is not synced yet. Needs the `git` option. */
  syncStatus(options?: SyncStatusOptions): Promise<SyncStatus>;
  /** Flushes pending state and closes the engine; later calls reject with code `not_open`. Safe to call twice. */
  close(): Promise<void>;
  /** Sends one raw request of docs/ABI.md §3 and resolves with its `result`. */
  call<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
}

/** One file of a tree, by its path in the root. */
export interface TreeFile {
  path: string;
  /** The content; a string is taken as UTF-8. */
  data: Uint8Array | string;
}

/** The answer of {@link ArborMemory.importFiles}. */
export interface ImportReport {
  /** Paths written. */
  imported: string[];
  /** Files left out and why (not markdown, hidden folder, malformed path, too large, already there). */
  skipped: { path: string; reason: string }[];
}

/**
 * Error codes: the engine's (docs/ABI.md §3; `busy`: another process held
 * the folder's lock for the whole wait; `read_only`: a write on a memory
 * opened `readOnly`) and the bindings' own — `crashed` (the module trapped;
 * the memory reopens at the next call), `memory_limit` (the call needed
 * more than `maxMemoryBytes`; likewise), `deadline` (the call ran past
 * `callTimeoutMs` and its worker was ended: docs/sandbox.md) and
 * `abi_version` (the module speaks another ABI); `sync`: git or the remote
 * failed a sync (the cause is the underlying error).
 */
export type ArborErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'unknown_method'
  | 'invalid_params'
  | 'not_open'
  | 'invalid_path'
  | 'not_found'
  | 'malformed'
  | 'io'
  | 'internal'
  | 'busy'
  | 'read_only'
  | 'crashed'
  | 'memory_limit'
  | 'deadline'
  | 'abi_version'
  | 'sync';

/** The error every failed call rejects with. */
export declare class ArborError extends Error {
  constructor(code: string, message: string, options?: { cause?: unknown });
  readonly name: 'ArborError';
  /** A stable code to branch on: one of {@link ArborErrorCode}. */
  readonly code: ArborErrorCode | (string & {});
}

/**
 * Opens a memory: compiles the engine (once per module), starts it on
 * `storage` and reads the tree.
 *
 * @example
 * import { openMemory, nodeFs } from 'arbor-memory';
 * const mem = await openMemory({ storage: nodeFs('./notes') });
 * await mem.curate([{ type: 'ADD', path: 'engineering/billing', title: 'Invoice retry policy',
 *   content: { narrative: 'Failed invoices are retried three times.' }, reason: 'billing sync' }]);
 * const { tier, answer } = await mem.query('how often are invoices retried?');
 * await mem.close();
 */
export declare function openMemory(options?: OpenOptions): Promise<ArborMemory>;

/**
 * Options of {@link startEngine}: the storage, module, output and sandbox
 * options of {@link OpenOptions}. Under `readOnly` every `open` request is
 * sent with `readOnly: true`.
 */
export type EngineOptions = Pick<OpenOptions, 'storage' | 'wasm' | 'onLog' | 'onOutput' | 'onProgress' | 'readOnly' | 'maxMemoryBytes' | 'embeddings'>;

/**
 * A running engine that has not been opened: the raw protocol of
 * docs/ABI.md §3, for hosts that build their own envelopes and for
 * conformance tests. Requests are queued and run one at a time.
 */
export interface ArborEngine {
  /**
   * Sends one request envelope (JSON text or its UTF-8 bytes) and resolves
   * with the response envelope's text, errors included; rejects only when
   * the module crashes or the engine is disposed.
   */
  request(envelope: string | Uint8Array): Promise<string>;
  /** Releases the instance after the queued requests; later requests reject with code `not_open`. */
  dispose(): Promise<void>;
}

/** Starts the engine on `storage` without opening it; {@link openMemory} is built on it. */
export declare function startEngine(options?: EngineOptions): Promise<ArborEngine>;

/**
 * Compiles the engine module from any of the sources {@link OpenOptions.wasm}
 * accepts (default: the package's), its memory capped at `maxMemoryBytes`
 * when given (not possible for a compiled `WebAssembly.Module`).
 */
export declare function compileArbor(source?: OpenOptions['wasm'], options?: Pick<OpenOptions, 'maxMemoryBytes'>): Promise<WebAssembly.Module>;
