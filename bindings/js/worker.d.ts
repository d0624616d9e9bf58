import type { ArborMemory, OpenAIEmbeddingsOptions, OpenOptions } from './index.js';

/** Where the memory in the worker keeps its tree. */
export type WorkerStorage =
  | { kind: 'memory'; /** Initial files, path → content. */ files?: Record<string, string | Uint8Array> }
  | { kind: 'indexedDB'; /** The database name. */ name: string }
  | { kind: 'nodeFs'; /** The folder (Node only), as for nodeFs(dir). */ dir: string };

/** Options of {@link openMemoryInWorker}. */
export interface WorkerOpenOptions extends Pick<OpenOptions, 'fixedTime' | 'maxFileBytes' | 'lifecycle' | 'onLog' | 'onOutput' | 'onExternalChange' | 'onProgress' | 'llm' | 'llmOptions' | 'readOnly' | 'maxMemoryBytes'> {
  /** @default { kind: 'memory' } */
  storage?: WorkerStorage;
  /**
   * The engine module as a URL (relative to the page), bytes or a compiled
   * module. @default the package's dist/arbor.wasm
   */
  wasm?: string | URL | ArrayBuffer | ArrayBufferView | WebAssembly.Module;
  /**
   * A deadline for each call of the memory (query, search, curate, … and
   * each engine step of a call that waits on a model; not the open, nor
   * exportFiles and importFiles). A call past it rejects with code
   * `deadline` and its worker is ended (docs/sandbox.md); what it wrote is
   * kept if it was saved. With `nodeFs` or `indexedDB` storage the next
   * call reopens the memory in a new worker; an in-memory tree is lost
   * with its worker, and later calls reject with code `crashed`.
   * @default none
   */
  callTimeoutMs?: number;
  /**
   * An embedding model, as the options of `openaiEmbeddings` (docs/js.md,
   * "Embeddings"): the engine asks for vectors synchronously, so the
   * worker makes the embedder beside its engine (a synchronous
   * XMLHttpRequest in a Web Worker, a thread of its own in Node), and the
   * API key goes to the worker. An embedder object is refused
   * (`invalid_params`): functions cannot cross to a worker.
   * @default none — BM25 and the evidence rules alone
   */
  embeddings?: OpenAIEmbeddingsOptions;
}

/**
 * An ArborMemory answered by a worker; close() also ends the worker. The
 * LLM adapter (`llm`) stays in the calling thread: the worker hands back
 * the engine's pending results and this thread makes the model calls, so
 * keys never reach the worker and any adapter object works. It has no
 * `sync` or `syncStatus`: a sync writes the storage beside the engine, so
 * it runs where the memory is (open it with openMemory and `git` inside
 * your own worker to sync off the page's thread).
 */
export type WorkerMemory = Omit<ArborMemory, 'sync' | 'syncStatus'>;

/**
 * Opens a memory in a new worker running worker-entry.js — a module Web
 * Worker in browsers, a worker_threads Worker in Node — so the calling
 * thread never blocks on the engine, and calls can have a deadline. Same
 * methods and errors as openMemory.
 *
 * @example
 * import { openMemoryInWorker } from 'arbor-memory/worker';
 * const mem = await openMemoryInWorker({ storage: { kind: 'indexedDB', name: 'notes' } });
 * const { results } = await mem.search('invoice retry');
 */
export declare function openMemoryInWorker(options?: WorkerOpenOptions): Promise<WorkerMemory>;
