// The convenience methods of ArborMemory (index.d.ts), written once on top
// of `call`, for the memory in this thread (index.js) and the one in a Web
// Worker (worker.js): both must offer exactly the same API.

/** Base class of every ArborMemory: subclasses provide `call(method, params)`. */
export class MemoryMethods {
  curate(operations) {
    return this.call('curate', { operations: Array.isArray(operations) ? operations : [operations] });
  }

  search(query, { limit } = {}) {
    return this.call('search', { query, limit });
  }

  query(query, { limit } = {}) {
    return this.call('query', { query, limit });
  }

  ingest(files, { domain, contextTurns, maxSourceBytes } = {}) {
    const list = Array.isArray(files) ? files : [files];
    return this.call('ingest', { files: list.map(({ name, content }) => ({ name, content })), domain, contextTurns, maxSourceBytes });
  }

  read(path) {
    return this.call('read', { path });
  }

  tree({ path, depth } = {}) {
    return this.call('tree', { path, depth });
  }

  stats() {
    return this.call('stats');
  }

  flush() {
    return this.call('flush');
  }
}
