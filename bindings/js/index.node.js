// The package's entry in Node: everything from index.js, plus the
// file-system adapter, which needs node:fs and so cannot be part of the
// entry that pages and workers load.

export * from './index.js';
export { nodeFs } from './storage/node.js';
// Embeddings in Node wait on a worker thread (node:worker_threads): the
// engine's import is synchronous, fetch is not.
export { openaiEmbeddings, embeddingsFromEnv } from './embed/node.js';
