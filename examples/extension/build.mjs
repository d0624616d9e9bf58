// Assembles the loadable extension: this folder's files plus the package's
// plain ESM files and dist/arbor.wasm under arbor/, laid out as in the
// package (arbor/bindings/js/, arbor/dist/arbor.wasm) so that the
// bindings find the wasm next to them with no configuration. No bundler.
//
//   node examples/extension/build.mjs [outDir]    (default dist/extension)
//
// Then load outDir as an unpacked extension (chrome://extensions,
// developer mode, "Load unpacked").

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');

/** The extension's own files. */
const FILES = ['manifest.json', 'background.js', 'popup.html', 'popup.css', 'popup.js'];

/**
 * Writes the extension into outDir (replacing what was there).
 *
 * @param {string} outDir
 * @returns {string} the absolute path of the extension
 */
export function buildExtension(outDir) {
  const out = path.resolve(outDir);
  const wasm = path.join(repo, 'dist/arbor.wasm');
  if (!fs.existsSync(wasm)) throw new Error(`${wasm} is missing: build it with ./build.sh wasm`);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  for (const f of FILES) fs.copyFileSync(path.join(here, f), path.join(out, f));
  // The runtime files only: no tests, no type declarations.
  fs.cpSync(path.join(repo, 'bindings/js'), path.join(out, 'arbor/bindings/js'), {
    recursive: true,
    filter: (src) => {
      const rel = path.relative(path.join(repo, 'bindings/js'), src);
      return rel !== 'test' && !rel.startsWith(`test${path.sep}`) && !src.endsWith('.d.ts') && !src.endsWith('.md');
    },
  });
  fs.mkdirSync(path.join(out, 'arbor/dist'), { recursive: true });
  fs.copyFileSync(wasm, path.join(out, 'arbor/dist/arbor.wasm'));
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = buildExtension(process.argv[2] ?? path.join(repo, 'dist/extension'));
  console.log(`extension in ${out}: load it unpacked (chrome://extensions, developer mode)`);
}
