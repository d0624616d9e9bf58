// One sync of a root from Node, for the sync fault runner (sync.go, -js):
// node tests/faults/jsync.mjs ROOT [REMOTE]. The root's memory is opened
// with the JS package over its folder and synced with isomorphic-git, as
// an agent in Node would; an error is printed and exits 1.

import { openMemory, nodeFs } from '../../bindings/js/index.node.js';
import { gitSync } from '../../bindings/js/sync/node.js';

const [root, remote] = process.argv.slice(2);
const wasm = new URL('../../dist/arbor.wasm', import.meta.url);
try {
  const mem = await openMemory({ storage: nodeFs(root), wasm, git: gitSync(), watch: false });
  try {
    await mem.sync(remote ? { remote } : {});
  } finally {
    await mem.close();
  }
} catch (err) {
  console.error(`jsync: ${/** @type {Error} */ (err).message}`);
  process.exit(1);
}
