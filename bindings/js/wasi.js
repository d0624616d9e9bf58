// A minimal WASI preview1 host: exactly what the Go runtime on wasip1
// needs to start and run a reactor — arguments, environment, clocks,
// random bytes, stdout/stderr, exit. There is no file system (Arbor's
// files go through the arbor_host imports), so every descriptor beyond
// 0–2 is EBADF and Go sees no preopened folders.
//
// Arbor uses this shim in Node too, instead of node:wasi, which has been
// seen to crash a Go module once its memory grows (docs/design.md, WebAssembly and the host ABI). It imports
// nothing from Node, so it also runs in pages and workers.

/** WASI errno values used here. */
export const errno = Object.freeze({
  SUCCESS: 0,
  BADF: 8,
  FAULT: 21,
  INVAL: 28,
  NOSYS: 52,
  SPIPE: 70,
});

const CLOCK_REALTIME = 0;
const CLOCK_MONOTONIC = 1;
const EVENTTYPE_CLOCK = 0;
const SUBCLOCKFLAG_ABSTIME = 1;
const FILETYPE_CHARACTER_DEVICE = 2;
const RANDOM_CHUNK = 65536; // crypto.getRandomValues refuses more at once

/**
 * The functions of the shim, with the signatures of WASI preview1 (a
 * pointer or a size is an i32, a number in JS; an i64 is a bigint). Each
 * returns an errno.
 *
 * @typedef {object} WASIFunctions
 * @property {(argcPtr: number, sizePtr: number) => number} args_sizes_get
 * @property {(argvPtr: number, bufPtr: number) => number} args_get
 * @property {(countPtr: number, sizePtr: number) => number} environ_sizes_get
 * @property {(envPtr: number, bufPtr: number) => number} environ_get
 * @property {(id: number, resPtr: number) => number} clock_res_get
 * @property {(id: number, precision: bigint, timePtr: number) => number} clock_time_get
 * @property {(ptr: number, len: number) => number} random_get
 * @property {(fd: number, iovsPtr: number, iovsLen: number, nwrittenPtr: number) => number} fd_write
 * @property {(fd: number, iovsPtr: number, iovsLen: number, nreadPtr: number) => number} fd_read
 * @property {(fd: number, statPtr: number) => number} fd_fdstat_get
 * @property {(fd: number, offset: bigint, whence: number, newOffsetPtr: number) => number} fd_seek
 * @property {(fd: number) => number} fd_close
 * @property {(fd: number, bufPtr: number) => number} fd_prestat_get
 * @property {(fd: number, pathPtr: number, pathLen: number) => number} fd_prestat_dir_name
 * @property {(inPtr: number, outPtr: number, nsubs: number, neventsPtr: number) => number} poll_oneoff
 * @property {(code: number) => never} proc_exit
 * @property {() => number} sched_yield
 */

/**
 * The output streams the module writes to: 1 stdout, 2 stderr.
 * @typedef {1 | 2} OutputFd
 */

/** Thrown by proc_exit: the module asked to stop with `code`. */
export class WASIExit extends Error {
  /** @param {number} code */
  constructor(code) {
    super(`wasm module exited with code ${code}`);
    this.name = 'WASIExit';
    /** @type {number} */
    this.code = code;
  }
}

/**
 * Writes output lines to console.error, prefixed with the stream's name
 * when it is stdout.
 *
 * @param {number} fd
 * @param {string} line
 */
export function defaultOutput(fd, line) {
  console.error(fd === 1 ? `[arbor stdout] ${line}` : line);
}

/** The WASI preview1 imports for one instance. */
export class WASI {
  /**
   * @param {object} [options]
   * @param {string[]} [options.args] argv; default `['arbor']`
   * @param {Record<string, string>} [options.env] environment; default empty
   * @param {(fd: OutputFd, line: string) => void} [options.onOutput] receives
   *   what the module writes to fd 1 and 2, one line at a time (without the
   *   newline); default: console.error
   * @param {() => bigint} [options.now] wall clock in nanoseconds since
   *   the Unix epoch; default: Date.now() (it follows changes of the
   *   system clock, which performance.timeOrigin does not)
   * @param {() => bigint} [options.monotonic] monotonic clock in
   *   nanoseconds; default: performance.now()
   */
  constructor(options = {}) {
    const enc = new TextEncoder();
    this.args = (options.args ?? ['arbor']).map((a) => enc.encode(a + '\0'));
    this.env = Object.entries(options.env ?? {}).map(([k, v]) => enc.encode(`${k}=${v}\0`));
    this.onOutput = options.onOutput ?? defaultOutput;
    this.now = options.now ?? (() => BigInt(Date.now()) * 1_000_000n);
    this.monotonic = options.monotonic ?? (() => msToNs(performance.now()));
    /**
     * Time the module has "slept" through poll_oneoff, added to the
     * monotonic clock: with one thread there is nothing to wait for, so a
     * sleep returns at once and the clock jumps instead (see pollOneoff).
     */
    this.slept = 0n;
    /** @type {WebAssembly.Memory | null} */
    this.memory = null;
    /**
     * Partial output lines per descriptor, and their decoders (which keep split UTF-8 sequences).
     * @type {Map<OutputFd, { decoder: TextDecoder, text: string }>}
     */
    this.pending = new Map();
  }

  /**
   * The `wasi_snapshot_preview1` import object for `module`: the functions
   * this shim implements, plus an ENOSYS stub for every other WASI
   * function the module imports, so instantiation never fails on a
   * function the module links but never calls.
   *
   * @param {WebAssembly.Module} [module]
   * @returns {Record<string, Function>}
   */
  imports(module) {
    /** @type {Record<string, Function>} */
    const out = {};
    for (const [name, fn] of Object.entries(this.functions())) out[name] = unsigned(fn);
    if (module) {
      for (const imp of WebAssembly.Module.imports(module)) {
        if (imp.module === 'wasi_snapshot_preview1' && imp.kind === 'function' && !(imp.name in out)) {
          out[imp.name] = () => errno.NOSYS;
        }
      }
    }
    return out;
  }

  /**
   * Binds the instance's memory and runs the reactor's start-up
   * (`_initialize`).
   *
   * @param {WebAssembly.Instance} instance
   */
  initialize(instance) {
    this.bind(instance);
    const init = instance.exports._initialize;
    if (typeof init === 'function') init();
  }

  /**
   * Binds the instance's memory without running anything.
   *
   * @param {WebAssembly.Instance} instance
   */
  bind(instance) {
    const memory = instance.exports.memory;
    if (!(memory instanceof WebAssembly.Memory)) throw new TypeError('wasm module exports no memory');
    this.memory = memory;
  }

  /** Emits output that has no trailing newline yet. */
  flush() {
    for (const [fd, state] of this.pending) {
      const rest = state.text + state.decoder.decode();
      state.text = '';
      if (rest) this.onOutput(fd, rest);
    }
  }

  /** A DataView over the current memory buffer: re-made on every call, because growing memory replaces the buffer. */
  view() {
    if (!this.memory) throw new Error('WASI: no memory bound; call initialize(instance) first');
    return new DataView(this.memory.buffer);
  }

  /**
   * A view of guest memory; only the imports call it, once the memory is bound.
   *
   * @param {number} ptr
   * @param {number} len
   */
  bytes(ptr, len) {
    // Cast: the module cannot call an import before initialize() bound its memory.
    return new Uint8Array(/** @type {WebAssembly.Memory} */ (this.memory).buffer, ptr, len);
  }

  /** @returns {WASIFunctions} */
  functions() {
    return {
      args_sizes_get: (argcPtr, sizePtr) => this.sizes(this.args, argcPtr, sizePtr),
      args_get: (argvPtr, bufPtr) => this.strings(this.args, argvPtr, bufPtr),
      environ_sizes_get: (countPtr, sizePtr) => this.sizes(this.env, countPtr, sizePtr),
      environ_get: (envPtr, bufPtr) => this.strings(this.env, envPtr, bufPtr),

      clock_res_get: (id, resPtr) => {
        if (id !== CLOCK_REALTIME && id !== CLOCK_MONOTONIC) return errno.INVAL;
        // Date.now() counts milliseconds; performance.now() about microseconds.
        this.view().setBigUint64(resPtr, id === CLOCK_REALTIME ? 1_000_000n : 1000n, true);
        return errno.SUCCESS;
      },
      clock_time_get: (id, _precision, timePtr) => {
        let t;
        if (id === CLOCK_REALTIME) t = this.now();
        else if (id === CLOCK_MONOTONIC) t = this.monotonic() + this.slept;
        else return errno.INVAL;
        this.view().setBigUint64(timePtr, t, true);
        return errno.SUCCESS;
      },

      random_get: (ptr, len) => {
        for (let off = 0; off < len; off += RANDOM_CHUNK) {
          // A fresh view per chunk; getRandomValues refuses views of a
          // shared buffer, which this memory is not.
          crypto.getRandomValues(this.bytes(ptr + off, Math.min(RANDOM_CHUNK, len - off)));
        }
        return errno.SUCCESS;
      },

      fd_write: (fd, iovsPtr, iovsLen, nwrittenPtr) => {
        if (fd !== 1 && fd !== 2) return errno.BADF;
        const view = this.view();
        let total = 0;
        for (let i = 0; i < iovsLen; i++) {
          const ptr = view.getUint32(iovsPtr + i * 8, true);
          const len = view.getUint32(iovsPtr + i * 8 + 4, true);
          this.output(fd, this.bytes(ptr, len));
          total += len;
        }
        view.setUint32(nwrittenPtr, total, true);
        return errno.SUCCESS;
      },
      fd_read: (fd, _iovsPtr, _iovsLen, nreadPtr) => {
        if (fd !== 0) return errno.BADF;
        this.view().setUint32(nreadPtr, 0, true); // stdin is always at its end
        return errno.SUCCESS;
      },
      fd_fdstat_get: (fd, statPtr) => {
        if (fd > 2) return errno.BADF;
        // fdstat: filetype u8, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16.
        const view = this.view();
        for (let i = 0; i < 24; i++) view.setUint8(statPtr + i, 0);
        view.setUint8(statPtr, FILETYPE_CHARACTER_DEVICE);
        view.setBigUint64(statPtr + 8, 0xffffffffffffffffn, true);
        return errno.SUCCESS;
      },
      fd_seek: (fd) => (fd <= 2 ? errno.SPIPE : errno.BADF),
      fd_close: () => errno.BADF,
      fd_prestat_get: () => errno.BADF,
      fd_prestat_dir_name: () => errno.BADF,

      poll_oneoff: (inPtr, outPtr, nsubs, neventsPtr) => this.pollOneoff(inPtr, outPtr, nsubs, neventsPtr),

      proc_exit: (code) => {
        this.flush();
        throw new WASIExit(code);
      },
      sched_yield: () => errno.SUCCESS,
    };
  }

  /**
   * @param {Uint8Array[]} list
   * @param {number} countPtr
   * @param {number} sizePtr
   */
  sizes(list, countPtr, sizePtr) {
    const view = this.view();
    view.setUint32(countPtr, list.length, true);
    view.setUint32(sizePtr, list.reduce((n, b) => n + b.length, 0), true);
    return errno.SUCCESS;
  }

  /**
   * @param {Uint8Array[]} list
   * @param {number} ptrsPtr
   * @param {number} bufPtr
   */
  strings(list, ptrsPtr, bufPtr) {
    const view = this.view();
    let at = bufPtr;
    list.forEach((b, i) => {
      view.setUint32(ptrsPtr + i * 4, at, true);
      this.bytes(at, b.length).set(b);
      at += b.length;
    });
    return errno.SUCCESS;
  }

  /**
   * @param {OutputFd} fd
   * @param {Uint8Array} bytes
   */
  output(fd, bytes) {
    let state = this.pending.get(fd);
    if (!state) {
      state = { decoder: new TextDecoder(), text: '' };
      this.pending.set(fd, state);
    }
    state.text += state.decoder.decode(bytes, { stream: true });
    let nl;
    while ((nl = state.text.indexOf('\n')) >= 0) {
      const line = state.text.slice(0, nl);
      state.text = state.text.slice(nl + 1);
      this.onOutput(fd, line);
    }
  }

  /**
   * Go calls poll_oneoff to sleep (clock subscriptions) when every
   * goroutine waits on a timer. With a single thread and no other events
   * to wait for, the shim returns at once and moves its monotonic clock
   * past the deadline, so the timer fires on the next check without
   * burning real time. Descriptor subscriptions get EBADF.
   *
   * Only the monotonic clock moves: the wall clock stays true, and the
   * engine measures durations, not sleeps.
   *
   * @param {number} inPtr
   * @param {number} outPtr
   * @param {number} nsubs
   * @param {number} neventsPtr
   */
  pollOneoff(inPtr, outPtr, nsubs, neventsPtr) {
    if (nsubs === 0) return errno.INVAL;
    const view = this.view();
    // subscription (48 bytes): userdata u64, tag u8 @8,
    //   clock {id u32 @16, timeout u64 @24, precision u64 @32, flags u16 @40}
    /** @type {{ userdata: bigint, tag: number, wait: bigint }[]} */
    const subs = [];
    for (let i = 0; i < nsubs; i++) {
      const at = inPtr + i * 48;
      const sub = { userdata: view.getBigUint64(at, true), tag: view.getUint8(at + 8), wait: 0n };
      if (sub.tag === EVENTTYPE_CLOCK) {
        const id = view.getUint32(at + 16, true);
        const timeout = view.getBigUint64(at + 24, true);
        sub.wait = timeout;
        if (view.getUint16(at + 40, true) & SUBCLOCKFLAG_ABSTIME) {
          const now = id === CLOCK_MONOTONIC ? this.monotonic() + this.slept : this.now();
          sub.wait = timeout > now ? timeout - now : 0n;
        }
      }
      subs.push(sub);
    }
    // Descriptor subscriptions complete at once (with EBADF); otherwise the
    // earliest clock deadline is reached by moving the clock forward.
    const fdSubs = subs.filter((s) => s.tag !== EVENTTYPE_CLOCK);
    let fired;
    if (fdSubs.length > 0) {
      fired = fdSubs;
    } else {
      const soonest = subs.reduce((m, s) => (s.wait < m ? s.wait : m), subs[0].wait);
      this.slept += soonest;
      fired = subs.filter((s) => s.wait <= soonest);
    }
    // event (32 bytes): userdata u64, error u16 @8, type u8 @10, fd_readwrite {nbytes u64 @16, flags u16 @24}
    fired.forEach((s, i) => {
      const ev = outPtr + i * 32;
      for (let j = 0; j < 32; j++) view.setUint8(ev + j, 0);
      view.setBigUint64(ev, s.userdata, true);
      view.setUint16(ev + 8, s.tag === EVENTTYPE_CLOCK ? errno.SUCCESS : errno.BADF, true);
      view.setUint8(ev + 10, s.tag);
    });
    view.setUint32(neventsPtr, fired.length, true);
    return errno.SUCCESS;
  }
}

/** @param {number} ms */
function msToNs(ms) {
  return BigInt(Math.round(ms * 1e6));
}

/**
 * fn with its i32 arguments read unsigned. WebAssembly hands JavaScript
 * every i32 signed, so an address past 2 GiB arrives negative; every i32 of
 * WASI preview 1 is unsigned (pointers, sizes, descriptors, flags).
 *
 * @param {Function} fn
 * @returns {Function}
 */
function unsigned(fn) {
  return (/** @type {unknown[]} */ ...args) => fn(...args.map((a) => (typeof a === 'number' ? a >>> 0 : a)));
}
