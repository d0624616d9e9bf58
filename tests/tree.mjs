// Reads a folder of test files for a memory root, for the suites that load
// a tree into memory storage or a page.

import fs from 'node:fs';
import path from 'node:path';

/** Every file below dir as { 'a/b.md': text }. */
export function readTree(dir) {
  const out = {};
  const walk = (abs, rel) => {
    for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
      const r = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) walk(path.join(abs, d.name), r);
      else out[r] = fs.readFileSync(path.join(abs, d.name), 'utf8');
    }
  };
  walk(dir, '');
  return out;
}
