// Serves the bare repositories of a folder over HTTP for the sync fault
// runner (sync.go, -js), as tests/gitserver.mjs does for the sync tests:
// node tests/faults/gitserve.mjs DIR prints the base URL, then serves
// until it is killed or its standard input closes.

import { serveGit } from '../gitserver.mjs';

const server = await serveGit({ root: process.argv[2] });
console.log(server.url);
process.stdin.resume();
process.stdin.on('end', () => server.close().then(() => process.exit(0)));
