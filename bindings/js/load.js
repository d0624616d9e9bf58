// Finding and compiling arbor.wasm, in Node and in browsers. Node-only
// modules are imported dynamically, only on the paths that need them, so
// this file loads in a page or a worker.

/** The module shipped with the package: dist/arbor.wasm at its root. */
export const defaultWasmURL = new URL('../../dist/arbor.wasm', import.meta.url);

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/** Compiling a ~10 MB module is the slow part of opening; the default one is compiled once per process. */
let defaultModule = null;

/**
 * Compiles the Arbor module from whatever the caller has.
 *
 * @param {string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module} [source]
 *   default: the package's dist/arbor.wasm. A string is a URL when it has a
 *   scheme (`https:`, `file:`, …), otherwise a file path in Node and a URL
 *   relative to the page elsewhere.
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileArbor(source) {
  if (source === undefined || source === null) {
    defaultModule ??= compileFrom(defaultWasmURL).catch((err) => {
      defaultModule = null; // let a later call retry, e.g. after a build
      throw err;
    });
    return defaultModule;
  }
  return compileFrom(source);
}

async function compileFrom(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (typeof Response !== 'undefined' && source instanceof Response) return compileResponse(source);
  if (typeof source === 'string' && !/^[a-z][a-z0-9+.-]+:/i.test(source)) {
    // A bare path (a one-letter scheme would be a Windows drive).
    if (isNode) return WebAssembly.compile(await readNodeFile(source));
    source = new URL(source, globalThis.location?.href);
  }
  const url = source instanceof URL ? source : new URL(source);
  if (url.protocol === 'file:' && isNode) return WebAssembly.compile(await readNodeFile(url));
  const res = await fetch(url);
  if (!res.ok) throw new Error(`arbor: fetching ${url}: HTTP ${res.status}`);
  return compileResponse(res);
}

async function compileResponse(res) {
  if (typeof WebAssembly.compileStreaming === 'function') {
    try {
      return await WebAssembly.compileStreaming(res.clone());
    } catch (err) {
      // Served without `application/wasm`: compile from the bytes instead.
      if (!(err instanceof TypeError)) throw err;
    }
  }
  return WebAssembly.compile(await res.arrayBuffer());
}

async function readNodeFile(pathOrURL) {
  const { readFile } = await import('node:fs/promises');
  try {
    return await readFile(pathOrURL);
  } catch (err) {
    if (err.code === 'ENOENT' && pathOrURL === defaultWasmURL) {
      throw new Error(`arbor: ${err.path} is missing; build it with ./build.sh wasm`, { cause: err });
    }
    throw err;
  }
}
