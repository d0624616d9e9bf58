// The sync adapter for bundlers and browsers: isomorphic-git over fetch
// (its http/web client). Importing this entry is what brings isomorphic-git
// in; the rest of the package never does (docs/js.md, "Sync").

import * as git from 'isomorphic-git';
import http from 'isomorphic-git/http/web';
import { gitSyncWith } from './core.js';

export { gitSyncWith } from './core.js';

/** @type {typeof import('./index.d.ts').gitSync} */
export function gitSync(options = {}) {
  return gitSyncWith({ git, http, ...options });
}
