// A memory root as a plain list of files, both ways: what exportFiles
// hands out and importFiles takes in, so that notes kept in a browser can
// always leave it as an ordinary folder of markdown.

import { pathProblem, compareNames } from './paths.js';
import { sameBytes } from './bytes.js';

/** @typedef {import('./index.d.ts').Storage} Storage */
/** @typedef {import('./index.d.ts').TreeFile} TreeFile */

/** The engine's own default (core/api DefaultMaxFileBytes). */
const DEFAULT_MAX_FILE_BYTES = 1 << 20;

const encoder = new TextEncoder();

/**
 * Every file of the root, `.arbor/` included, sorted by path.
 *
 * @param {Storage} storage
 * @returns {(TreeFile & { data: Uint8Array })[]}
 */
export function treeFiles(storage) {
  /** @type {(TreeFile & { data: Uint8Array })[]} */
  const out = [];
  /** @param {string} dir */
  const walk = (dir) => {
    for (const e of storage.list(dir)) {
      const p = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.dir) walk(p);
      else out.push({ path: p, data: storage.read(p) });
    }
  };
  walk('');
  return out.sort((a, b) => compareNames(a.path, b.path));
}

/**
 * Writes the markdown files of `files` into `storage`, never replacing
 * anything: a file that is not markdown, lies in a hidden folder, has a
 * malformed path, is too large, or would overwrite a different file is
 * skipped and reported with the reason.
 *
 * @param {Storage} storage
 * @param {Iterable<TreeFile>} files
 * @param {{ maxFileBytes?: number }} [options]
 * @returns {import('./index.d.ts').ImportReport}
 */
export function importInto(storage, files, { maxFileBytes = DEFAULT_MAX_FILE_BYTES } = {}) {
  /** @type {string[]} */
  const imported = [];
  /** @type {import('./index.d.ts').ImportReport['skipped']} */
  const skipped = [];
  const seen = new Set();
  for (const file of files ?? []) {
    const p = file?.path;
    /** @param {string} reason */
    const skip = (reason) => skipped.push({ path: String(p), reason });
    if (typeof p !== 'string') {
      skip('the path is not a string');
      continue;
    }
    if (p.split('/').some((s) => s.startsWith('.') && s !== '.' && s !== '..')) {
      skip('inside a hidden folder');
      continue;
    }
    const problem = pathProblem(p);
    if (problem) {
      skip(`malformed path: ${problem}`);
      continue;
    }
    if (!p.toLowerCase().endsWith('.md')) {
      skip('not a markdown file');
      continue;
    }
    if (seen.has(p)) {
      skip('listed twice');
      continue;
    }
    seen.add(p);
    const data = typeof file.data === 'string' ? encoder.encode(file.data) : file.data;
    if (!(data instanceof Uint8Array)) {
      skip('the content is not text or bytes');
      continue;
    }
    if (data.length > maxFileBytes) {
      skip(`larger than ${maxFileBytes} bytes`);
      continue;
    }
    let existing;
    try {
      existing = statOrNull(storage, p);
    } catch (err) {
      skip(`cannot be written: ${/** @type {Error} */ (err).message}`); // cast: a storage failure
      continue;
    }
    if (existing?.dir) {
      skip('a folder has this path');
      continue;
    }
    if (existing) {
      skip(sameBytes(storage.read(p), data) ? 'already there, unchanged' : 'a different file is already there');
      continue;
    }
    try {
      storage.write(p, data);
    } catch (err) {
      skip(`cannot be written: ${/** @type {Error} */ (err).message}`); // cast: a storage failure
      continue;
    }
    imported.push(p);
  }
  return { imported, skipped };
}

/**
 * @param {Storage} storage
 * @param {string} p
 * @returns {import('./index.d.ts').StorageEntry | null}
 */
function statOrNull(storage, p) {
  try {
    return storage.stat(p);
  } catch (err) {
    if (/** @type {{ code?: unknown } | null | undefined} */ (err)?.code === 'ENOENT') return null; // cast: storages throw coded errors
    throw err;
  }
}
