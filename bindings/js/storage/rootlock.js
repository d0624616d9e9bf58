// The cross-process lock on a memory root in a folder: the same protocol
// as the Go host's (host/rootlock), so that a Node program, the arbor CLI
// and an MCP server on one root take turns (docs/design.md, "Many
// processes, one root").
//
// The lock is the file .arbor/lock, created exclusively and holding its
// owner {"pid","host","since","token"}. Not flock(2): Node has none without
// a native addon, and both hosts must honour one lock. A lock whose owner
// is a process of this machine that no longer runs is stale, as is one not
// touched for STALE_AFTER_MS (its owner on another machine died); a holder
// touches it every quarter of that. Breaking a stale lock is serialized by
// .arbor/lock.break, so two waiters cannot remove each other's fresh lock.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { StorageError } from './errors.js';

export const LOCK_PATH = '.arbor/lock';
export const STALE_AFTER_MS = 2 * 60_000;
export const DEFAULT_WAIT_MS = 2 * 60_000;
/** A lock file with no readable owner older than this was abandoned while being written. */
const INCOMPLETE_MS = 5_000;

/**
 * @typedef {{ pid: number, host: string, since: string, token: string }} Owner
 */

/** Sleeps the thread: the engine calls its imports synchronously. */
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** @param {number} ms */
const sleep = (ms) => Atomics.wait(sleeper, 0, 0, ms);

/**
 * Takes the lock of the memory root `root` (an absolute folder), waiting
 * while another live process holds it, for at most `waitMs`; the thread
 * sleeps meanwhile, since the engine asks for the lock from inside a call.
 * Returns the function that releases it. A root whose lock file cannot be
 * created because writes are refused (read-only, permission denied) is
 * served unlocked: this process cannot write there either. Throws a
 * StorageError with code EBUSY when the wait ends first, and one with code
 * ENOSPC when the lock file cannot be written for want of space (a full
 * disk or quota) and no other process holds it.
 *
 * @param {string} root
 * @param {{ waitMs?: number }} [options]
 * @returns {() => void}
 */
export function lockSync(root, { waitMs = DEFAULT_WAIT_MS } = {}) {
  const take = taker(path.join(root, LOCK_PATH), waitMs);
  let delay = 1;
  for (;;) {
    const got = take();
    if (got) return got;
    sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
}

/**
 * The same lock protocol on another file of the root (`rel`, e.g. the Go
 * host's `.arbor/sync.lock`, which syncs of one root take turns on),
 * waiting without blocking the thread: the wait may be as long as another
 * process's sync with its remote.
 *
 * @param {string} root
 * @param {string} rel
 * @param {{ waitMs?: number }} [options]
 * @returns {Promise<() => void>}
 */
export async function lockFileAsync(root, rel, { waitMs = DEFAULT_WAIT_MS } = {}) {
  const take = taker(path.join(root, ...rel.split('/')), waitMs);
  let delay = 1;
  for (;;) {
    const got = take();
    if (got) return got;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 50);
  }
}

/**
 * One attempt at a time on the lock file `file`: each call takes it and
 * returns its release, or returns null when a live holder keeps it (wait,
 * then call again), or throws EBUSY once `waitMs` has passed.
 *
 * @param {string} file
 * @param {number} waitMs
 * @returns {() => (() => void) | null}
 */
function taker(file, waitMs) {
  const host = os.hostname();
  const token = randomBytes(8).toString('hex');
  const deadline = Date.now() + waitMs;
  return () => {
    /** @type {Owner} */
    const owner = { pid: process.pid, host, since: new Date().toISOString(), token };
    try {
      create(file, owner);
      const timer = setInterval(() => touch(file), STALE_AFTER_MS / 4);
      timer.unref();
      return () => {
        clearInterval(timer);
        release(file, token);
      };
    } catch (err) {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return () => {};
      // Not served unlocked, unlike a folder that refuses writes: space may
      // come back during the call. The storage serves it for reading.
      if (code === 'ENOSPC' || code === 'EDQUOT') {
        throw new StorageError('ENOSPC', `no space left to write the lock file ${file}`, { cause: err });
      }
      if (code !== 'EEXIST') throw err;
    }
    const { held, stale } = inspect(file, host);
    if (stale && breakStale(file, held)) return null;
    if (Date.now() >= deadline) {
      throw new StorageError('EBUSY', `the memory root is busy: ${file} is held by ${describe(held)} (waited ${waitMs} ms)`);
    }
    return null;
  };
}

/**
 * @param {string} file
 * @param {Owner} owner
 */
function create(file, owner) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'wx', 0o644);
  try {
    fs.writeSync(fd, JSON.stringify(owner));
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw err;
  }
  fs.closeSync(fd);
}

/** @param {string} file */
function touch(file) {
  try {
    const now = new Date();
    fs.utimesSync(file, now, now);
  } catch {
    // gone or taken over: release will tell
  }
}

/**
 * The token of the lock on the memory root `dir`, or null when none is
 * held (or its owner cannot be read).
 *
 * @param {string} dir
 * @returns {string | null}
 */
export function lockToken(dir) {
  return read(lockFile(dir))?.token ?? null;
}

/**
 * Removes the lock on the memory root `dir` if it still holds `token`: for
 * a host that ended a worker while the worker held the lock (worker.js).
 * The worker can no longer release it, and its process, alive, keeps it
 * from turning stale for STALE_AFTER_MS.
 *
 * @param {string} dir
 * @param {string} token
 */
export function releaseAbandoned(dir, token) {
  const file = lockFile(dir);
  if (read(file)?.token === token) fs.rmSync(file, { force: true });
}

/** @param {string} dir */
function lockFile(dir) {
  return path.join(fs.realpathSync.native(path.resolve(dir)), LOCK_PATH);
}

/**
 * Removes the lock file if it is still this holder's.
 *
 * @param {string} file
 * @param {string} token
 */
function release(file, token) {
  const held = read(file);
  if (held === undefined) return;
  if (held?.token !== token) {
    // Taken over as stale: the new owner's lock stays.
    console.error(`arbor: ${file} was taken over by ${describe(held)} while this process held it`);
    return;
  }
  fs.rmSync(file, { force: true });
}

/**
 * The owner in the lock file: undefined when there is no file, null when it
 * cannot be parsed.
 *
 * @param {string} file
 * @returns {Owner | null | undefined}
 */
function read(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const o = JSON.parse(text);
    return o && typeof o === 'object' && Number.isInteger(o.pid) && o.pid > 0 ? o : null;
  } catch {
    return null;
  }
}

/**
 * @param {string} file
 * @param {string} host
 * @returns {{ held: Owner | null | undefined, stale: boolean }}
 */
function inspect(file, host) {
  let age;
  try {
    age = Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return { held: undefined, stale: false }; // gone already: the next create will tell
  }
  const held = read(file);
  if (!held) return { held, stale: age > INCOMPLETE_MS };
  if (age > STALE_AFTER_MS) return { held, stale: true };
  return { held, stale: held.host === host && !alive(held.pid) };
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/**
 * Removes the stale lock judged to hold `was`, unless it changed since; the
 * check and the removal happen under lock.break. False when another
 * process is breaking it: wait, then look again.
 *
 * @param {string} file
 * @param {Owner | null | undefined} was
 * @returns {boolean}
 */
function breakStale(file, was) {
  const guard = `${file}.break`;
  let fd;
  try {
    fd = fs.openSync(guard, 'wx');
  } catch {
    // Another process is breaking it; a guard left by one that died in
    // these few lines is removed once it is old.
    try {
      if (Date.now() - fs.statSync(guard).mtimeMs > INCOMPLETE_MS) fs.rmSync(guard, { force: true });
    } catch {
      // gone
    }
    return false;
  }
  fs.closeSync(fd);
  try {
    const now = read(file);
    // Unless someone took it in between, it goes.
    if (now !== undefined && !(now && now.token !== was?.token)) fs.rmSync(file, { force: true });
    return true;
  } finally {
    fs.rmSync(guard, { force: true });
  }
}

/** @param {Owner | null | undefined} o */
function describe(o) {
  return o ? `pid ${o.pid} on ${o.host} since ${o.since}` : 'a process that has not written its name yet';
}
