// The sandbox limits of docs/sandbox.md that the bindings enforce
// themselves: the memory cap, written into the module before it is
// compiled, and the read-only grant of an open request. The deadline is
// worker.js's: only a worker can be ended in the middle of a call.

import { ArborError } from './error.js';

const PAGE = 65536;
const MAX_PAGES = 65536; // 4 GiB, all a 32-bit memory can address

/**
 * The cap in whole pages, checked.
 *
 * @param {number} maxMemoryBytes
 * @returns {number}
 */
export function memoryPages(maxMemoryBytes) {
  if (typeof maxMemoryBytes !== 'number' || !Number.isFinite(maxMemoryBytes) || maxMemoryBytes < PAGE) {
    throw new ArborError('invalid_params', `maxMemoryBytes ${maxMemoryBytes}: want a number of bytes of at least one 64 KiB page`);
  }
  return Math.min(MAX_PAGES, Math.floor(maxMemoryBytes / PAGE));
}

/**
 * The GOMEMLIMIT the module starts with under a cap of `pages`: the Go
 * runtime then collects garbage harder as its memory nears the cap instead
 * of growing into it (the quarter above is for what the limit does not
 * count, and for the overshoot of a soft limit). The Go host does the same.
 *
 * @param {number} pages
 */
export function goMemLimit(pages) {
  return String(Math.floor((pages * PAGE) / 4) * 3);
}

/** @param {number} pages */
export function mib(pages) {
  return `${Math.floor((pages * PAGE) / 2 ** 20)} MiB`;
}

/**
 * Returns a copy of the module `wasm` whose memory may not grow past
 * `pages`. The engine module defines its own memory (it exports it), so
 * the host cannot hand it a `WebAssembly.Memory` with a maximum; the
 * maximum is instead written into the memory section's limits, which every
 * engine (V8, SpiderMonkey, JSC) then enforces: memory.grow past it fails,
 * and the Go runtime inside reports that it is out of memory. (Node's
 * worker `resourceLimits` do not help: they bound the JS heap, and wasm
 * memories live outside it.)
 *
 * @param {Uint8Array} wasm
 * @param {number} pages
 * @returns {Uint8Array<ArrayBuffer>}
 */
export function capMemory(wasm, pages) {
  const bad = (/** @type {string} */ why) => new ArborError('invalid_params', `maxMemoryBytes: ${why}`);
  if (wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d) throw bad('the module is not WebAssembly');
  let at = 8;
  /** @returns {number} */
  const uleb = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (at >= wasm.length) throw bad('the module is truncated');
      const b = wasm[at++];
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
  };
  while (at < wasm.length) {
    const start = at;
    const id = wasm[at++];
    const size = uleb();
    const body = at;
    const end = body + size;
    if (end > wasm.length) throw bad('the module is truncated');
    if (id !== 5) {
      at = end;
      continue;
    }
    const count = uleb();
    if (count !== 1) throw bad(`the module defines ${count} memories, not one`);
    const flags = wasm[at++];
    if (flags & ~1) throw bad('the module\'s memory is shared or 64-bit');
    const min = uleb();
    const max = flags & 1 ? uleb() : MAX_PAGES;
    if (min > pages) throw bad(`${mib(pages)} is below the ${mib(min)} the module needs to start`);
    const limits = [1, ...encode(min), ...encode(Math.min(max, pages))];
    const content = [...encode(1), ...limits, ...wasm.subarray(at, end)];
    const section = [5, ...encode(content.length), ...content];
    const out = new Uint8Array(start + section.length + (wasm.length - end));
    out.set(wasm.subarray(0, start), 0);
    out.set(section, start);
    out.set(wasm.subarray(end), start + section.length);
    return out;
  }
  throw bad('the module defines no memory of its own');
}

/**
 * Unsigned LEB128.
 *
 * @param {number} n
 * @returns {number[]}
 */
function encode(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/**
 * Whether a line the module printed is the Go runtime saying that it ran
 * out of memory, which it does before it exits or traps when memory.grow
 * fails: nothing else tells a cap that was hit from a crash.
 *
 * @param {string} line
 */
export function isOutOfMemory(line) {
  return line.startsWith('fatal error: out of memory') || line.startsWith('fatal error: runtime: cannot allocate memory');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The request with `readOnly: true` in its params when it is an open (any
 * `readOnly` the caller sent is replaced; the engine reads keys without
 * regard to case, and so does this). Other requests, and requests that are
 * not JSON, go as they are: the engine answers them.
 *
 * @param {Uint8Array} request
 * @returns {Uint8Array}
 */
export function grantReadOnly(request) {
  let env;
  try {
    env = JSON.parse(decoder.decode(request));
  } catch {
    return request;
  }
  if (!env || typeof env !== 'object' || Array.isArray(env)) return request;
  const key = (/** @type {string} */ name) => Object.keys(env).filter((k) => k.toLowerCase() === name).pop();
  const methodKey = key('method');
  if (methodKey === undefined || env[methodKey] !== 'open') return request;
  const paramsKey = key('params');
  const params = paramsKey === undefined || env[paramsKey] === null ? {} : env[paramsKey];
  if (!params || typeof params !== 'object' || Array.isArray(params)) return request;
  for (const k of Object.keys(params)) if (k.toLowerCase() === 'readonly') delete params[k];
  params.readOnly = true;
  for (const k of Object.keys(env)) if (k.toLowerCase() === 'params') delete env[k];
  env.params = params;
  return encoder.encode(JSON.stringify(env));
}
