// The shared fixture of the LLM suites: the tree in tree/ and the scripts
// in scripts/, read the same way by the Node end-to-end tests and the
// browser test (the Go tests read the same files).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTree } from '../tree.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The question tiers 0–2 cannot answer in the fixture tree. */
export const QUESTION = 'failed retry escalation';

/** The fixture tree as { 'a/b.md': text }. */
export const llmTree = () => readTree(join(here, 'tree'));

/** The steps of scripts/NAME. */
export const script = (name) => JSON.parse(readFileSync(join(here, 'scripts', name), 'utf8'));

/** The raw notes curateFrom is tested on. */
export const notes = () => readFileSync(join(here, 'notes.txt'), 'utf8');
