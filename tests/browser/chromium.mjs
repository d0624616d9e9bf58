// What the browser suites need: Debian's chromium driven by playwright-core,
// and the built engine. `skip` says why a suite cannot run here (false when
// it can); .ci/run installs chromium so CI always runs them.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const chromiumPath = process.env.ARBOR_CHROMIUM ?? '/usr/bin/chromium';

/** @type {typeof import('playwright-core') | null} */
export let playwright = null;
try {
  playwright = await import('playwright-core');
} catch {
  // reported by skip below
}

export const skip = !fs.existsSync(chromiumPath)
  ? `${chromiumPath} is missing: install Debian's chromium (apt-get install chromium) to run the browser tests`
  : !playwright
    ? 'playwright-core is not installed: run npm ci'
    : !fs.existsSync(path.join(repo, 'dist/arbor.wasm'))
      ? 'dist/arbor.wasm is missing: run ./build.sh wasm'
      : false;
