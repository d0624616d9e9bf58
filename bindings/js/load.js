// Finding and compiling arbor.wasm, in Node and in browsers. Node-only
// modules are imported dynamically, only on the paths that need them, so
// this file loads in a page or a worker.

import { ArborError } from './error.js';
import { capMemory, memoryPages } from './sandbox.js';

/** The module shipped with the package: dist/arbor.wasm at its root. */
export const defaultWasmURL = new URL('../../dist/arbor.wasm', import.meta.url);

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * Compiling a ~10 MB module is the slow part of opening; the default one is compiled once per process.
 * @type {Promise<WebAssembly.Module> | null}
 */
let defaultModule = null;

/**
 * The default module with its memory capped, by the cap in pages.
 * @type {Map<number, Promise<WebAssembly.Module>>}
 */
const cappedDefaults = new Map();

/** @typedef {NonNullable<import('./index.d.ts').OpenOptions['wasm']>} WasmSource */

/**
 * Compiles the Arbor module from whatever the caller has: by default the
 * package's dist/arbor.wasm. A string is a URL when it has a scheme
 * (`https:`, `file:`, …), otherwise a file path in Node and a URL relative
 * to the page elsewhere. With `maxMemoryBytes` the module's memory is
 * capped before it is compiled (sandbox.js), which needs its bytes: a
 * compiled `WebAssembly.Module` cannot be capped.
 *
 * @type {typeof import('./index.d.ts').compileArbor}
 */
export function compileArbor(source, { maxMemoryBytes } = {}) {
  if (maxMemoryBytes !== undefined) return compileCapped(source, maxMemoryBytes);
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
 * @param {WasmSource | null | undefined} source
 * @param {number} maxMemoryBytes
 * @returns {Promise<WebAssembly.Module>}
 */
async function compileCapped(source, maxMemoryBytes) {
  const pages = memoryPages(maxMemoryBytes);
  if (source instanceof WebAssembly.Module) {
    throw new ArborError('invalid_params', 'maxMemoryBytes: a compiled WebAssembly.Module cannot be capped; pass the module as bytes, a URL or a path');
  }
  // Cast: every source but a compiled module is left (WebAssembly.Module is
  // an empty interface, which instanceof cannot narrow away).
  if (source !== undefined && source !== null) return WebAssembly.compile(capMemory(await bytesFrom(/** @type {string | URL | ArrayBuffer | ArrayBufferView | Response} */ (source)), pages));
  let compiled = cappedDefaults.get(pages);
  if (!compiled) {
    compiled = bytesFrom(defaultWasmURL).then((bytes) => WebAssembly.compile(capMemory(bytes, pages)));
    compiled.catch(() => cappedDefaults.delete(pages)); // let a later call retry
    cappedDefaults.set(pages, compiled);
  }
  return compiled;
}

/**
 * The module's bytes, from any source but a compiled module.
 *
 * @param {string | URL | ArrayBuffer | ArrayBufferView | Response} source
 * @returns {Promise<Uint8Array>}
 */
async function bytesFrom(source) {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (typeof Response !== 'undefined' && source instanceof Response) return new Uint8Array(await source.arrayBuffer());
  const where = locate(/** @type {string | URL} */ (source));
  if ('file' in where) return readNodeFile(where.file);
  return new Uint8Array(await (await fetchOk(where.url)).arrayBuffer());
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
  // Cast: only strings and URLs are left (WebAssembly.Module is an empty
  // interface, which instanceof cannot narrow away).
  const where = locate(/** @type {string | URL} */ (source));
  if ('file' in where) return WebAssembly.compile(await readNodeFile(where.file));
  return compileResponse(await fetchOk(where.url));
}

/**
 * Where a string or URL source is: a file Node reads (a bare path, a
 * `file:` URL) or a URL to fetch. A bare path elsewhere is relative to
 * the page.
 *
 * @param {string | URL} source
 * @returns {{ file: string | URL } | { url: URL }}
 */
function locate(source) {
  if (typeof source === 'string' && !/^[a-z][a-z0-9+.-]+:/i.test(source)) {
    // A bare path (a one-letter scheme would be a Windows drive).
    return isNode ? { file: source } : { url: new URL(source, globalThis.location?.href) };
  }
  const url = source instanceof URL ? source : new URL(source);
  return url.protocol === 'file:' && isNode ? { file: url } : { url };
}

/** @param {URL} url */
async function fetchOk(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`arbor: fetching ${url}: HTTP ${res.status}`);
  return res;
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
