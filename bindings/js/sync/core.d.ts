import type { GitSync } from '../index.js';
import type { GitSyncOptions } from './index.js';

export type { GitSyncOptions } from './index.js';

/**
 * The sync adapter over the isomorphic-git given, importing nothing of it:
 * for pages without a bundler that load isomorphic-git's UMD build.
 *
 * @example
 * <script src="isomorphic-git/index.umd.min.js"></script>
 * <script src="isomorphic-git/http/web/index.umd.js"></script>
 * <script type="module">
 *   import { gitSyncWith } from 'arbor-memory/sync/core';
 *   const git = gitSyncWith({ git: globalThis.git, http: globalThis.GitHttp });
 * </script>
 */
export declare function gitSyncWith(options: GitSyncOptions): GitSync;
