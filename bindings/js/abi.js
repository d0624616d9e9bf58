// The `arbor_host` imports of docs/ABI.md §2 over a storage adapter. The
// module calls them synchronously, so the adapter is synchronous too.
//
// Guest memory can grow during any call into the module, which replaces
// `memory.buffer`; every import therefore makes its views afresh and
// never keeps one across calls.

import { pathProblem, compareNames } from './paths.js';
import { sameBytes } from './bytes.js';

/** @typedef {import('./index.d.ts').Storage} Storage */
/** @typedef {import('./index.d.ts').StorageEntry} StorageEntry */
/** @typedef {import('./index.d.ts').LogLevel} LogLevel */
/** @typedef {import('./index.d.ts').Progress} Progress */

/**
 * The `arbor_host` imports of docs/ABI.md §2 (pointers and lengths are
 * i32s); each returns a size or a negative code, except log.
 *
 * @typedef {object} HostImports
 * @property {(pathPtr: number, pathLen: number, buf: number, cap: number) => number} fs_read
 * @property {(pathPtr: number, pathLen: number, offset: bigint, buf: number, len: number) => number} fs_read_at
 * @property {(pathPtr: number, pathLen: number, buf: number, cap: number) => number} fs_list
 * @property {(pathPtr: number, pathLen: number, buf: number, cap: number) => number} fs_stat
 * @property {(pathPtr: number, pathLen: number, afterPtr: number, afterLen: number, buf: number, cap: number) => number} fs_walk
 * @property {(pathPtr: number, pathLen: number, dataPtr: number, dataLen: number) => number} fs_write
 * @property {(pathPtr: number, pathLen: number, dataPtr: number, dataLen: number) => number} fs_append
 * @property {(pathPtr: number, pathLen: number, dataPtr: number, dataLen: number, oldPtr: number, oldLen: number, existed: number) => number} fs_swap
 * @property {() => number} fs_lock
 * @property {() => number} fs_unlock
 * @property {(pathPtr: number, pathLen: number) => number} fs_remove
 * @property {(fromPtr: number, fromLen: number, toPtr: number, toLen: number) => number} fs_rename
 * @property {(reqPtr: number, reqLen: number, buf: number, cap: number) => number} embed
 * @property {(level: number, msgPtr: number, msgLen: number) => void} log
 */

/** The negative return codes of docs/ABI.md §2. */
export const codes = Object.freeze({ NOT_FOUND: -1, DENIED: -2, INVALID: -3, IO: -4, BUSY: -5, CHANGED: -6, UNAVAILABLE: -7, NO_SPACE: -8, TOO_LONG: -9, CROSS_DEVICE: -10 });

/**
 * Storage error codes → ABI codes; anything else is an I/O failure.
 * @type {Record<string, number>}
 */
const byStorageCode = {
  ENOENT: codes.NOT_FOUND,
  EACCES: codes.DENIED,
  EPERM: codes.DENIED,
  EINVAL: codes.INVALID,
  EISDIR: codes.INVALID,
  ENOTDIR: codes.INVALID,
  ENOTEMPTY: codes.INVALID,
  EIO: codes.IO,
  ENOSPC: codes.NO_SPACE,
  EDQUOT: codes.NO_SPACE,
  ENAMETOOLONG: codes.TOO_LONG,
  EXDEV: codes.CROSS_DEVICE,
  EBUSY: codes.BUSY,
  ECHANGED: codes.CHANGED,
};

/** The imports that write: one that goes through says the disk has room. */
const writingOps = new Set(['write', 'append', 'swap', 'rename', 'remove']);

/** @type {LogLevel[]} */
const levels = ['debug', 'info', 'warn', 'error'];
/** The log level of progress reports (docs/ABI.md §2.2). */
const PROGRESS = 4;

/** Thrown inside an import to return an ABI code. */
class Refusal {
  /** @param {number} code */
  constructor(code) {
    this.code = code;
  }
}

/**
 * The host side of the ABI for one instance: build it, pass `imports` as
 * the `arbor_host` module when instantiating, then `bind(instance)`.
 */
export class ArborHost {
  /**
   * @param {object} options
   * @param {Storage} options.storage the memory root
   * @param {(level: LogLevel, message: string) => void} [options.onLog]
   *   receives the engine's log lines and the host's own storage failures
   * @param {(progress: Progress) => void} [options.onProgress]
   *   receives the engine's progress reports (log lines of level 4,
   *   docs/ABI.md §2.2)
   * @param {boolean} [options.readOnly] grants the storage read-only: every
   *   write, append, removal and rename is refused with DENIED, whatever the
   *   engine asks, and fs_lock takes no lock
   * @param {import('./index.d.ts').Embedder} [options.embeddings] the
   *   embedding model behind the embed import (docs/ABI.md §2.3); without
   *   one the import answers UNAVAILABLE and the engine ranks by BM25 alone
   */
  constructor({ storage, onLog, onProgress, readOnly = false, embeddings }) {
    const missing = /** @type {(keyof Storage)[]} */ (['read', 'write', 'remove', 'rename', 'list', 'stat']).filter((m) => typeof storage?.[m] !== 'function');
    if (missing.length > 0) throw new TypeError(`arbor: the storage adapter lacks ${missing.join(', ')}`);
    this.storage = storage;
    this.onLog = onLog ?? (() => {});
    /** @type {Set<string>} the folders walks left out, each said once (TreeWalk) */
    this.leftOut = new Set();
    this.onProgress = onProgress;
    this.readOnly = readOnly;
    this.embeddings = embeddings;
    /**
     * embed's last answer that did not fit the guest's buffer, with its
     * request: the guest asks again at once, and the model is not asked
     * twice.
     * @type {{ request: string, bytes: Uint8Array } | null}
     */
    this.embedKept = null;
    /** @type {WebAssembly.Memory | null} */
    this.memory = null;
    this.decoder = new TextDecoder('utf-8', { fatal: true });
    this.encoder = new TextEncoder();
    /** fs_walk's answers are written here: one buffer for every call. */
    this.walkOut = new Writer();
    /**
     * The walk fs_walk answered last, to go on from where it stopped when
     * the next call resumes it: deriving it again lists every folder above
     * the point reached, which a storage describes whole (a stat per file).
     * @type {{ walk: TreeWalk, root: string, after: string | null } | null}
     */
    this.walking = null;
    /**
     * The last variable-size answer that did not fit the guest's buffer.
     * The guest asks again at once with a buffer of the right size; the
     * retry is served from here instead of reading the storage twice.
     * Any other import call drops it.
     * @type {{ op: string, path: string, bytes: Uint8Array } | null}
     */
    this.oversized = null;
    /** Whether a write refused for want of space was logged since the last write that went through. */
    this.noSpaceSaid = false;
    /** @type {HostImports} the `arbor_host` import object */
    this.imports = {
      fs_read: (pp, pl, buf, cap) => this.sized('read', pp, pl, buf, cap, (p) => this.storage.read(p)),
      fs_read_at: (pp, pl, off, buf, len) =>
        this.guard('read', () => {
          const p = this.path(pp, pl);
          const offset = Number(off); // an i64: a BigInt
          if (!Number.isSafeInteger(offset) || offset < 0) return codes.INVALID;
          const into = this.view(buf, len); // a RangeError outside memory
          if (typeof this.storage.readAt === 'function') return this.storage.readAt(p, into, offset);
          const bytes = toBytes(this.storage.read(p)).subarray(offset, offset + len);
          into.set(bytes);
          return bytes.length;
        }),
      fs_list: (pp, pl, buf, cap) => this.sized('list', pp, pl, buf, cap, (p) => this.listJSON(p)),
      fs_stat: (pp, pl, buf, cap) => this.sized('stat', pp, pl, buf, cap, (p) => this.statJSON(p)),
      fs_walk: (pp, pl, ap, al, buf, cap) =>
        this.guard('walk', () => {
          const p = this.path(pp, pl);
          let after = null;
          if (al !== 0) {
            let a;
            try {
              a = this.decoder.decode(this.view(ap, al));
            } catch {
              return codes.INVALID;
            }
            if (!a.endsWith('/')) return codes.INVALID;
            a = a.slice(0, -1);
            if (pathProblem(a) || !(p === '' || a === p || a.startsWith(`${p}/`))) return codes.INVALID;
            after = a;
          }
          this.view(buf, cap); // a RangeError outside memory
          const out = this.walkAnswer(p, after, cap >>> 0);
          if (out.length > cap >>> 0) return out.length;
          this.view(buf, out.length).set(out);
          return out.length;
        }),
      fs_write: (pp, pl, dp, dl) =>
        this.guard('write', () => {
          this.writable('fs_write');
          const p = this.path(pp, pl);
          // A copy: the storage may keep it, and the view dies with the next grow.
          const data = this.view(dp, dl).slice();
          this.storage.write(p, data);
          return 0;
        }),
      fs_append: (pp, pl, dp, dl) =>
        this.guard('append', () => {
          this.writable('fs_append');
          const p = this.path(pp, pl);
          const data = this.view(dp, dl).slice();
          if (typeof this.storage.append === 'function') {
            this.storage.append(p, data);
            return 0;
          }
          /** @type {Uint8Array} */
          let old = new Uint8Array(0);
          try {
            old = toBytes(this.storage.read(p));
          } catch (err) {
            if (/** @type {{ code?: string }} */ (err)?.code !== 'ENOENT') throw err;
          }
          const whole = new Uint8Array(old.length + data.length);
          whole.set(old);
          whole.set(data, old.length);
          this.storage.write(p, whole);
          return 0;
        }),
      fs_swap: (pp, pl, dp, dl, op, ol, existed) =>
        this.guard('swap', () => {
          const p = this.path(pp, pl);
          const data = this.view(dp, dl).slice();
          const old = this.view(op, ol).slice();
          if (typeof this.storage.swap === 'function') {
            this.storage.swap(p, data, old, existed !== 0);
            return 0;
          }
          // A storage without swap is written only by this thread between
          // the check and the write (memory, an IndexedDB mirror).
          let now = null;
          try {
            now = toBytes(this.storage.read(p));
          } catch (err) {
            if (/** @type {{ code?: string }} */ (err)?.code !== 'ENOENT') throw err;
          }
          if ((now !== null) !== (existed !== 0) || (now !== null && !sameBytes(now, old))) return codes.CHANGED;
          this.storage.write(p, data);
          return 0;
        }),
      // Storages no other process writes (memory, IndexedDB, whose tabs
      // take turns by a Web Lock around each call) have no lock.
      fs_lock: () =>
        this.guard('lock', () => {
          // The lock is a file: a memory granted read-only takes none, as a
          // folder that refuses writes is served unlocked (§2.1).
          if (!this.readOnly) this.storage.lock?.();
          return 0;
        }),
      fs_unlock: () =>
        this.guard('unlock', () => {
          this.storage.unlock?.();
          return 0;
        }),
      fs_remove: (pp, pl) =>
        this.guard('remove', () => {
          this.writable('fs_remove');
          this.storage.remove(this.path(pp, pl));
          return 0;
        }),
      fs_rename: (fp, fl, tp, tl) =>
        this.guard('rename', () => {
          this.writable('fs_rename');
          this.storage.rename(this.path(fp, fl), this.path(tp, tl));
          return 0;
        }),
      embed: (rp, rl, buf, cap) => {
        this.oversized = null;
        if (!this.embeddings?.model) return codes.UNAVAILABLE;
        try {
          const request = this.decoder.decode(this.view(rp, rl));
          this.view(buf, cap); // a RangeError outside memory
          const kept = this.embedKept;
          this.embedKept = null;
          const bytes = kept && kept.request === request ? kept.bytes : this.encoder.encode(this.embedAnswer(request));
          if (bytes.length > cap >>> 0) {
            this.embedKept = { request, bytes };
          } else {
            this.view(buf, bytes.length).set(bytes);
          }
          return bytes.length;
        } catch {
          return codes.INVALID; // outside memory, not UTF-8 or not the request's JSON
        }
      },
      log: (level, mp, ml) => {
        this.oversized = null;
        let msg;
        try {
          msg = new TextDecoder().decode(this.view(mp, ml));
        } catch {
          return; // a log line is never worth a trap
        }
        try {
          if (level === PROGRESS) this.onProgress?.(JSON.parse(msg));
          else this.onLog(levels[level] ?? 'info', msg);
        } catch {
          // nor is a failing log callback
        }
      },
    };
  }

  /**
   * embed's JSON answer to a request `{"input": [texts]}`: the model and
   * one vector per text, or the error of the model call.
   *
   * @param {string} request
   * @returns {string}
   */
  embedAnswer(request) {
    const { input } = JSON.parse(request);
    if (!Array.isArray(input)) throw new TypeError('embed: no input');
    const embedder = /** @type {import('./index.d.ts').Embedder} */ (this.embeddings);
    if (input.length === 0) return JSON.stringify({ model: embedder.model, data: [] });
    try {
      const data = embedder.embedSync(input);
      return JSON.stringify({ model: embedder.model, data });
    } catch (err) {
      const e = /** @type {{ code?: string, message?: string }} */ (err);
      return JSON.stringify({ error: { code: typeof e?.code === 'string' ? e.code : 'http', message: String(e?.message ?? err) } });
    }
  }

  /**
   * Binds the instance's memory.
   *
   * @param {WebAssembly.Instance} instance
   */
  bind(instance) {
    // Cast: the module exports its memory as `memory` (docs/ABI.md §5);
    // buffer() fails plainly if it does not.
    this.memory = /** @type {WebAssembly.Memory} */ (instance.exports.memory);
  }

  buffer() {
    if (!this.memory) throw new Error('ArborHost: no memory bound; call bind(instance) first');
    return this.memory.buffer;
  }

  /**
   * The guest's bytes at ptr, len long. WebAssembly hands JavaScript every
   * i32 signed, so an address past 2 GiB arrives negative: read unsigned
   * (a million-entry memory grew past it and every import failed there).
   * A RangeError when the range is outside memory.
   *
   * @param {number} ptr
   * @param {number} len
   * @returns {Uint8Array}
   */
  view(ptr, len) {
    return new Uint8Array(this.buffer(), ptr >>> 0, len >>> 0);
  }

  /**
   * Decodes and checks a path argument; malformed ones are refused with INVALID.
   *
   * @param {number} ptr
   * @param {number} len
   * @returns {string}
   */
  path(ptr, len) {
    let p;
    try {
      p = this.decoder.decode(this.view(ptr, len));
    } catch {
      throw new Refusal(codes.INVALID); // outside memory, or not UTF-8
    }
    if (pathProblem(p)) throw new Refusal(codes.INVALID);
    return p;
  }

  /**
   * Refuses a writing import under the read-only grant. DENIED carries no
   * message over the ABI, so the refusal is logged with its reason.
   *
   * @param {string} name
   */
  writable(name) {
    if (!this.readOnly) return;
    try {
      this.onLog('warn', `${name}: refused: the memory is granted read-only`);
    } catch {
      // ignored: see log
    }
    throw new Refusal(codes.DENIED);
  }

  /**
   * Runs one import, turning refusals and storage errors into ABI codes.
   *
   * @param {string} op
   * @param {() => number} fn
   * @returns {number}
   */
  guard(op, fn) {
    this.oversized = null;
    try {
      const rc = fn();
      // A write that went through: the disk has room again (below).
      if (writingOps.has(op)) this.noSpaceSaid = false;
      return rc;
    } catch (err) {
      if (err instanceof Refusal) return err.code;
      // A pointer and length that do not fit guest memory.
      if (err instanceof RangeError) return codes.INVALID;
      // Cast: a storage may throw anything; only a `code` and a `message` are read.
      const e = /** @type {{ code?: string, message?: string } | null | undefined} */ (err);
      const code = byStorageCode[/** @type {string} */ (e?.code)] ?? codes.IO; // no code: key "undefined", not mapped
      // A full disk refuses every write of a call, and of the calls after
      // it until space comes back: said once, as the Go host says it.
      const said = code === codes.NO_SPACE && this.noSpaceSaid;
      if (code === codes.NO_SPACE) this.noSpaceSaid = true;
      if ((code === codes.IO || code === codes.NO_SPACE) && !said) {
        try {
          this.onLog('error', `arbor host: ${op}: ${e?.message ?? e}`);
        } catch {
          // ignored: see log
        }
      }
      return code;
    }
  }

  /**
   * The size protocol of fs_read, fs_list and fs_stat: return the answer's
   * size, and copy it only when it fits the guest's buffer.
   *
   * @param {string} op
   * @param {number} pp
   * @param {number} pl
   * @param {number} buf
   * @param {number} cap
   * @param {(path: string) => unknown} produce the answer: bytes, or a string as UTF-8
   * @returns {number}
   */
  sized(op, pp, pl, buf, cap, produce) {
    const last = this.oversized;
    return this.guard(op, () => {
      const p = this.path(pp, pl);
      const bytes = last && last.op === op && last.path === p ? last.bytes : toBytes(produce(p));
      if (bytes.length > 0x7fffffff) return codes.IO; // not representable as i32
      if (bytes.length <= cap >>> 0) {
        this.view(buf, bytes.length).set(bytes);
      } else {
        this.oversized = { op, path: p, bytes };
      }
      return bytes.length;
    });
  }

  /**
   * One answer of fs_walk (docs/ABI.md §2): the records of the folders of
   * the walk of `root` that follow the folder `after` (null: from the
   * start), as many as fit in `cap` bytes; or, when the first alone does
   * not, that record (longer than `cap`). The walk the last answer left
   * goes on when this call resumes it; any other is derived again from
   * `after`, so that the answer is the same either way.
   *
   * @param {string} root
   * @param {string | null} after
   * @param {number} cap
   * @returns {Uint8Array}
   */
  walkAnswer(root, after, cap) {
    const kept = this.walking;
    this.walking = null;
    let walk;
    if (kept && after !== null && kept.root === root && kept.after === after) {
      walk = kept.walk;
    } else {
      walk = new TreeWalk(this.storage, (p, why) => {
        if (this.leftOut.has(p)) return;
        this.leftOut.add(p);
        this.onLog('warn', `fs_walk: ${p}: left out of the memory: ${why}`);
      });
      if (!walk.start(root, after)) return new Uint8Array(0);
    }
    const out = this.walkOut;
    out.n = 0;
    let last = after;
    for (let rec = walk.next(); rec; rec = walk.next()) {
      const mark = out.n;
      out.record(rec.path, rec.list);
      if (out.n > cap) {
        walk.pending = rec; // the next call starts with it
        this.walking = { walk, root, after: last };
        if (mark === 0) return out.bytes();
        out.n = mark;
        break;
      }
      last = rec.path;
    }
    return out.bytes();
  }

  /** @param {string} p */
  listJSON(p) {
    const list = this.storage.list(p);
    const entries = Array.from(list, normalize).sort((a, b) => compareNames(a.name, b.name));
    return this.encoder.encode(JSON.stringify(entries));
  }

  /** @param {string} p */
  statJSON(p) {
    return this.encoder.encode(JSON.stringify(normalize(this.storage.stat(p))));
  }
}

/**
 * A folder of a walk whose sub-folders are walked in turn.
 *
 * @typedef {object} WalkFrame
 * @property {string} path
 * @property {string | undefined} id the storage's identity of the folder, if it gives one
 * @property {{ name: string, id: string | undefined }[]} subs
 * @property {number} next
 */

/**
 * A walk of a folder and every folder below it over the storage's `list`,
 * depth first in name order (fs_walk, docs/ABI.md §2): a folder removed
 * since its parent was listed is left out, one whose path the rules
 * refuse or that the storage identifies as one above it (a link back up
 * the tree) is not walked.
 */
class TreeWalk {
  /**
   * @param {Storage} storage
   * @param {(p: string, why: string) => void} leftOut hears of each folder
   *   the walk leaves out for a reason the user can fix (a name the rules
   *   refuse, a folder this user may not list, a path past the system's
   *   limit): what it holds is missing from the memory
   */
  constructor(storage, leftOut) {
    this.storage = storage;
    this.leftOut = leftOut;
    /** @type {WalkFrame[]} the folders of the walk's current path */
    this.stack = [];
    /** @type {{ path: string, list: StorageEntry[] } | null} the record next() gives first */
    this.pending = null;
  }

  /**
   * Lists folder p (dot-names left out) and pushes it.
   * @param {string} p
   * @param {string | undefined} id
   * @returns {StorageEntry[]}
   */
  enter(p, id) {
    const raw = Array.from(this.storage.list(p)).filter((e) => !String(e.name).startsWith('.'));
    raw.sort((a, b) => compareNames(String(a.name), String(b.name)));
    const list = raw.map(normalize);
    /** @type {WalkFrame} */
    const frame = { path: p, id, subs: [], next: 0 };
    raw.forEach((e, i) => {
      if (list[i].dir) frame.subs.push({ name: list[i].name, id: typeof e.id === 'string' ? e.id : undefined });
    });
    this.stack.push(frame);
    return list;
  }

  /**
   * Goes down into the sub-folder s of the innermost folder; null when it
   * is gone, leads back up the tree, or is a path the rules refuse.
   * @param {{ name: string, id: string | undefined }} s
   */
  descend(s) {
    const top = this.stack[this.stack.length - 1];
    if (s.id !== undefined && this.stack.some((f) => f.id === s.id)) return null;
    const p = top.path === '' ? s.name : `${top.path}/${s.name}`;
    const problem = pathProblem(p);
    if (problem) {
      this.leftOut(p, `the engine refuses its name (${problem})`);
      return null;
    }
    try {
      return { path: p, list: this.enter(p, s.id) };
    } catch (err) {
      const code = /** @type {{ code?: string }} */ (err)?.code;
      // Removed, or no longer a folder.
      if (code === 'ENOENT' || code === 'EINVAL') return null;
      if (code === 'ENAMETOOLONG') {
        this.leftOut(p, "its path is longer than the system's limit");
        return null;
      }
      // A folder this user may not list holds nothing the engine can read:
      // left out, where it failed the walk and the open of the whole memory.
      if (code === 'EACCES') {
        this.leftOut(p, 'this user may not list it (permission denied)');
        return null;
      }
      throw err;
    }
  }

  /**
   * Starts the walk of root, its first record pending; or, after a
   * folder, derives the walk again to just after it (its sub-folders come
   * next, or what follows it when it is gone). False when a resumed
   * walk's folder is gone: the walk is over. Storage errors of root on the
   * first call are fs_list's.
   *
   * @param {string} root
   * @param {string | null} after
   * @returns {boolean}
   */
  start(root, after) {
    let list;
    try {
      const id = /** @type {{ id?: unknown }} */ (this.storage.stat(root)).id;
      list = this.enter(root, typeof id === 'string' ? id : undefined);
    } catch (err) {
      if (after !== null && /** @type {{ code?: string }} */ (err)?.code === 'ENOENT') return false;
      throw err;
    }
    if (after === null) {
      this.pending = { path: root, list };
      return true;
    }
    const rest = root === '' ? after : after.slice(root.length + 1);
    for (const name of rest === '' ? [] : rest.split('/')) {
      const top = this.stack[this.stack.length - 1];
      let i = 0;
      while (i < top.subs.length && compareNames(top.subs[i].name, name) <= 0) i++;
      top.next = i;
      if (i === 0 || top.subs[i - 1].name !== name || !this.descend(top.subs[i - 1])) break;
    }
    return true;
  }

  /** The next folder's record, or null when the walk is over. */
  next() {
    const rec = this.pending;
    if (rec) {
      this.pending = null;
      return rec;
    }
    while (this.stack.length > 0) {
      const top = this.stack[this.stack.length - 1];
      if (top.next === top.subs.length) {
        this.stack.pop();
        continue;
      }
      const found = this.descend(top.subs[top.next++]);
      if (found) return found;
    }
    return null;
  }
}

/** The bytes of fs_walk's records, growing as they are written. */
class Writer {
  constructor() {
    this.buf = new Uint8Array(64 << 10);
    this.n = 0;
    this.encoder = new TextEncoder();
  }

  /** @param {number} k */
  room(k) {
    if (this.n + k <= this.buf.length) return;
    const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    bigger.set(this.buf.subarray(0, this.n));
    this.buf = bigger;
  }

  /**
   * An unsigned varint (encoding/binary's), of a safe integer.
   * @param {number} v
   */
  uvarint(v) {
    this.room(10);
    while (v >= 0x80) {
      this.buf[this.n++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.n++] = v;
  }

  /**
   * A length and the UTF-8 bytes of s.
   * @param {string} s
   */
  str(s) {
    // Encoded in place, after room for a one-byte length (a name's, almost
    // always): a Uint8Array per name was most of what writing cost.
    this.room(3 * s.length + 10);
    const at = this.n + 1;
    const { written } = this.encoder.encodeInto(s, this.buf.subarray(at));
    if (written < 0x80) {
      this.buf[this.n] = written;
      this.n = at + written;
      return;
    }
    const bytes = this.buf.slice(at, at + written);
    this.uvarint(written);
    this.buf.set(bytes, this.n);
    this.n += written;
  }

  /**
   * The record of folder p listing list (docs/ABI.md §2).
   * @param {string} p
   * @param {StorageEntry[]} list
   */
  record(p, list) {
    this.str(p);
    this.uvarint(list.length);
    for (const e of list) {
      this.str(e.name);
      this.room(1);
      this.buf[this.n++] = e.dir ? 1 : 0;
      this.uvarint(e.size);
      this.varint(e.mtime);
      this.varint((e.ctime ?? 0) - e.mtime);
      this.uvarint(e.ino ?? 0);
    }
  }

  /**
   * v zigzag-encoded, as binary.AppendVarint.
   * @param {number} v
   */
  varint(v) {
    this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  bytes() {
    return this.buf.subarray(0, this.n);
  }
}

/**
 * Keeps exactly the fields of the ABI, with the right types; ctime and ino
 * only where the storage has them, as the Go host leaves them out.
 *
 * @param {StorageEntry} e what the storage returned (not trusted to be exactly that)
 * @returns {StorageEntry}
 */
function normalize(e) {
  /** @type {StorageEntry} */
  const out = {
    name: String(e.name),
    dir: Boolean(e.dir),
    size: e.dir ? 0 : Math.max(0, Math.trunc(Number(e.size) || 0)),
    mtime: Math.trunc(Number(e.mtime) || 0),
  };
  const ctime = Math.trunc(Number(e.ctime) || 0);
  const ino = Math.max(0, Math.trunc(Number(e.ino) || 0));
  if (ctime) out.ctime = ctime;
  if (ino && ino < 2 ** 64) out.ino = ino; // a double rounded up to 2^64 would overflow the guest's uint64
  return out;
}

/**
 * @param {unknown} x
 * @returns {Uint8Array}
 */
function toBytes(x) {
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (typeof x === 'string') return new TextEncoder().encode(x);
  throw new TypeError('storage.read must return a Uint8Array');
}
