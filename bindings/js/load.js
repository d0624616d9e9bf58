// Finding and compiling arbor.wasm, in Node and in browsers. Node-only
// modules are imported dynamically, only on the paths that need them, so
// this file loads in a page or a worker.

/** The module shipped with the package: dist/arbor.wasm at its root. */
export const defaultWasmURL = new URL('../../dist/arbor.wasm', import.meta.url);

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * Compiling a ~10 MB module is the slow part of opening; the default one is compiled once per process.
 * @type {Promise<WebAssembly.Module> | null}
 */
let defaultModule = null;

/** @typedef {NonNullable<import('./index.d.ts').OpenOptions['wasm']>} WasmSource */

/**
 * Compiles the Arbor module from whatever the caller has: by default the
 * package's dist/arbor.wasm. A string is a URL when it has a scheme
 * (`https:`, `file:`, …), otherwise a file path in Node and a URL relative
 * to the page elsewhere.
 *
 * @type {typeof import('./index.d.ts').compileArbor}
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

/**
 * @param {WasmSource} source
 * @returns {Promise<WebAssembly.Module>}
 */
async function compileFrom(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    // Cast: lib.dom's BufferSource excludes views of a SharedArrayBuffer,
    // which OpenOptions.wasm (ArrayBufferView) admits; compile is left to
    // accept or refuse those itself, as it always was.
    return WebAssembly.compile(/** @type {BufferSource} */ (source));
  }
  if (typeof Response !== 'undefined' && source instanceof Response) return compileResponse(source);
  if (typeof source === 'string' && !/^[a-z][a-z0-9+.-]+:/i.test(source)) {
    // A bare path (a one-letter scheme would be a Windows drive).
    if (isNode) return WebAssembly.compile(await readNodeFile(source));
    source = new URL(source, globalThis.location?.href);
  }
  // Cast: only URL strings are left (the branches above returned the rest;
  // WebAssembly.Module is an empty interface, which instanceof cannot narrow away).
  const url = source instanceof URL ? source : new URL(/** @type {string} */ (source));
  if (url.protocol === 'file:' && isNode) return WebAssembly.compile(await readNodeFile(url));
  const res = await fetch(url);
  if (!res.ok) throw new Error(`arbor: fetching ${url}: HTTP ${res.status}`);
  return compileResponse(res);
}

/**
 * @param {Response} res
 * @returns {Promise<WebAssembly.Module>}
 */
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

/**
 * @param {string | URL} pathOrURL
 * @returns {Promise<Uint8Array<ArrayBuffer>>}
 */
async function readNodeFile(pathOrURL) {
  const { readFile } = await import('node:fs/promises');
  try {
    return await readFile(pathOrURL);
  } catch (err) {
    // Cast: what readFile rejects with is a Node system error.
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT' && pathOrURL === defaultWasmURL) {
      throw new Error(`arbor: ${/** @type {NodeJS.ErrnoException} */ (err).path} is missing; build it with ./build.sh wasm`, { cause: err });
    }
    throw err;
  }
}
