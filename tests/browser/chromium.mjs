// What the browser tests share: where Chromium is, playwright-core if it is
// installed, and why the tests must skip when something is missing (.ci/run
// installs chromium, so CI always runs them).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Debian's chromium, or ARBOR_CHROMIUM. */
export const chromiumPath = process.env.ARBOR_CHROMIUM ?? '/usr/bin/chromium';

/** The playwright-core module, or null when it is not installed. */
export const playwright = await import('playwright-core').catch(() => null);

/** The `skip` option of a browser test: false, or why it cannot run here. */
export const skip = !fs.existsSync(chromiumPath)
  ? `${chromiumPath} is missing: install Debian's chromium (apt-get install chromium) to run the browser tests`
  : !playwright
    ? 'playwright-core is not installed: run npm ci'
    : !fs.existsSync(path.join(repo, 'dist/arbor.wasm'))
      ? 'dist/arbor.wasm is missing: run ./build.sh wasm'
      : false;
