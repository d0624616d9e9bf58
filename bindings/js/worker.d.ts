import type { ArborMemory, OpenOptions } from './index.js';

/** Where the memory in the worker keeps its tree. */
export type WorkerStorage =
  | { kind: 'memory'; /** Initial files, path → content. */ files?: Record<string, string | Uint8Array> }
  | { kind: 'indexedDB'; /** The database name. */ name: string };

/** Options of {@link openMemoryInWorker}. */
export interface WorkerOpenOptions extends Pick<OpenOptions, 'fixedTime' | 'maxFileBytes' | 'onLog' | 'onExternalChange' | 'llm' | 'llmOptions'> {
  /** @default { kind: 'memory' } */
  storage?: WorkerStorage;
  /**
   * The engine module as a URL (relative to the page), bytes or a compiled
   * module. @default the package's dist/arbor.wasm
   */
  wasm?: string | URL | ArrayBuffer | ArrayBufferView | WebAssembly.Module;
}

/**
 * An ArborMemory answered by a dedicated Web Worker; close() also ends the
 * worker. The LLM adapter (`llm`) stays in the calling thread: the worker
 * hands back the engine's pending results and this thread makes the model
 * calls, so keys never reach the worker and any adapter object works.
 */
export type WorkerMemory = ArborMemory;

/**
 * Opens a memory in a new module Web Worker (worker-entry.js), so the page
 * never blocks on the engine. Same methods and errors as openMemory.
 *
 * @example
 * import { openMemoryInWorker } from 'arbor-memory/worker';
 * const mem = await openMemoryInWorker({ storage: { kind: 'indexedDB', name: 'notes' } });
 * const { results } = await mem.search('invoice retry');
 */
export declare function openMemoryInWorker(options?: WorkerOpenOptions): Promise<WorkerMemory>;
