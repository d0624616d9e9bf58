// The path rules of docs/ABI.md §2, shared by the host imports and the
// storage adapters. The engine checks them too; a host checks them again
// because it must not trust the module with anything outside its root.

/**
 * Why a memory-root path is malformed, or null when it is acceptable.
 *
 * Accepted: "" (the root itself) and `/`-separated relative paths with no
 * empty, `.` or `..` segment, no backslash, no control character and no
 * segment starting with `.` outside a leading `.arbor`, the engine's
 * private folder (below which it may write `.arbor/.gitignore`).
 *
 * @param {string} p
 * @returns {string | null}
 */
export function pathProblem(p) {
  if (typeof p !== 'string') return 'not a string';
  if (p === '') return null;
  if (p.startsWith('/')) return 'absolute paths are not allowed';
  if (p.includes('\\')) return 'backslashes are not allowed';
  // C0, DEL and C1 controls: the same set as Go's unicode.IsControl.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(p)) return 'control characters are not allowed';
  const segments = p.split('/');
  const isPrivate = segments[0] === '.arbor';
  for (const s of segments) {
    if (s === '') return 'empty segments are not allowed';
    if (s === '.' || s === '..') return `"${s}" is not allowed`;
    if (s.startsWith('.') && !isPrivate) return `segment "${s}" starts with "."`;
  }
  return null;
}

/**
 * Orders names by Unicode code point, which is the byte order of their
 * UTF-8 form: the order the Go host and the engine use. (JavaScript's
 * default sort compares UTF-16 units and disagrees above U+FFFF.)
 *
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareNames(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    // i < n: both strings have a code point here (cast: codePointAt's type allows undefined).
    const x = /** @type {number} */ (a.codePointAt(i));
    const y = /** @type {number} */ (b.codePointAt(i));
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
