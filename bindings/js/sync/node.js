// The sync adapter for Node: isomorphic-git with its Node HTTP client, and
// node:fs, so that a nodeFs root is synced as the ordinary git repository
// in its folder (docs/js.md, "Sync").

import fs from 'node:fs';
import * as git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { gitSyncWith } from './core.js';
import { lockFileAsync } from '../storage/rootlock.js';
import { wholeGitWrites } from './wholefs.js';

/** The lock the syncs of one root take turns on, the Go host's too (host/gitsync). */
const SYNC_LOCK = '.arbor/sync.lock';

export { gitSyncWith } from './core.js';

/** node:fs for isomorphic-git, every write in .git put in place whole. */
const gitFs = wholeGitWrites(fs);

/** @type {typeof import('./index.d.ts').gitSync} */
export function gitSync(options = {}) {
  return gitSyncWith({ git, http, fs: gitFs, turn: (root) => lockFileAsync(root, SYNC_LOCK), ...options });
}
