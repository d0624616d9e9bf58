import type { GitSync } from '../index.js';

export type { GitSync, SyncRun, SyncOptions, SyncStatusOptions, SyncReport, SyncStatus, SyncStep, MergedFile } from '../index.js';

/** What {@link gitSyncWith} takes: isomorphic-git and its HTTP client (and, in Node, `fs`). */
export interface GitSyncOptions {
  /** The isomorphic-git module (`import * as git from 'isomorphic-git'`, or the UMD build's `git` global). */
  git: any;
  /** An isomorphic-git HTTP client: `isomorphic-git/http/web` (the UMD build's `GitHttp` global) or `isomorphic-git/http/node`. */
  http: any;
  /** Node's `fs` module: with it a `nodeFs` root is synced as the git repository in its folder. */
  fs?: any;
  /**
   * Node: takes the turn of the syncs of a folder root (`.arbor/sync.lock`, which the Go host's
   * syncs honour too), resolving with its release. `gitSync()` sets it in Node.
   */
  turn?: (root: string) => Promise<() => void>;
}

/**
 * The sync adapter of `openMemory({ git })` over isomorphic-git, which
 * this entry imports (in Node with its Node HTTP client and `fs`, elsewhere
 * with `fetch`). Options given replace those defaults.
 *
 * @example
 * import { openMemory, nodeFs } from 'arbor-memory';
 * import { gitSync } from 'arbor-memory/sync';
 * const mem = await openMemory({ storage: nodeFs('notes'), git: gitSync() });
 * await mem.sync({ remote: 'https://github.com/acme/team-memory.git', auth: { token } });
 */
export declare function gitSync(options?: Partial<GitSyncOptions>): GitSync;

/**
 * The same adapter over the isomorphic-git given, for pages without a
 * bundler that load isomorphic-git's UMD build (`arbor-memory/sync/core`
 * imports nothing of it).
 */
export declare function gitSyncWith(options: GitSyncOptions): GitSync;
