// A git remote over HTTP for the sync tests (Node and Chromium): bare
// repositories in a folder, served on 127.0.0.1 by git's own CGI program,
// git http-backend, behind node:http. It answers CORS requests (a browser
// page on another origin reaches it without a proxy) and, given a token,
// asks for it as HTTP Basic's password, as GitHub and Gitea do.

import http from 'node:http';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Where Debian's git keeps its CGI program. */
export const backend = process.env.ARBOR_GIT_HTTP_BACKEND ?? '/usr/lib/git-core/git-http-backend';

/** Why the sync tests cannot run here, or false when they can. */
export const skip = !fs.existsSync(backend) ? `${backend} is missing: install git (apt-get install git) to run the sync tests` : false;

/**
 * Makes an empty bare repository `name` under `root`, whose HEAD names
 * `branch`, accepting pushes over HTTP.
 *
 * @param {string} root
 * @param {string} name e.g. "team.git"
 * @param {string} [branch]
 */
export function bareRepo(root, name, branch = 'main') {
  const dir = path.join(root, name);
  execFileSync('git', ['init', '--quiet', '--bare', `--initial-branch=${branch}`, dir]);
  execFileSync('git', ['-C', dir, 'config', 'http.receivepack', 'true']);
  return dir;
}

/**
 * Serves the bare repositories under `root` at http://127.0.0.1:<port>/<name>.
 *
 * @param {{ root: string, token?: string }} options
 * @returns {Promise<{ url: string, requests: { method: string, path: string, status: number }[], close: () => Promise<void> }>}
 */
export function serveGit({ root, token }) {
  /** @type {{ method: string, path: string, status: number }[]} */
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    /** @param {number} status */
    const log = (status) => requests.push({ method: req.method ?? '', path: url.pathname, status });
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Git-Protocol, User-Agent, X-Http-Method-Override');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Type, WWW-Authenticate');
    if (req.method === 'OPTIONS') {
      log(204);
      res.writeHead(204).end();
      return;
    }
    if (token !== undefined) {
      const [scheme, cred] = (req.headers.authorization ?? '').split(' ');
      const password = scheme === 'Basic' && cred ? Buffer.from(cred, 'base64').toString().split(':').slice(1).join(':') : '';
      if (password !== token) {
        log(401);
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' }).end('a token is needed\n');
        return;
      }
    }
    const cgi = spawn(backend, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        REMOTE_USER: 'arbor',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    req.pipe(cgi.stdin);
    /** @type {Buffer[]} */
    let head = [];
    let started = false;
    let status = 200;
    cgi.stdout.on('data', (/** @type {Buffer} */ chunk) => {
      if (started) return void res.write(chunk);
      head.push(chunk);
      const all = Buffer.concat(head);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      /** @type {Record<string, string>} */
      const headers = {};
      for (const line of all.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(all.subarray(end + 4));
    });
    /** @type {Buffer[]} */
    const errors = [];
    cgi.stderr.on('data', (/** @type {Buffer} */ c) => errors.push(c));
    cgi.on('close', (code) => {
      if (!started) {
        status = 500;
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.write(Buffer.concat(errors));
      }
      log(code === 0 ? status : 500);
      res.end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * Every file of a folder but `.git/` and `.arbor/`, as path → bytes (hex
 * would hide nothing; Buffers compare by content in deepEqual).
 *
 * @param {string} dir
 * @returns {Record<string, Buffer>}
 */
export function folderFiles(dir) {
  /** @type {Record<string, Buffer>} */
  const out = {};
  /** @param {string} rel */
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === '.git' || p === '.arbor') continue;
      if (e.isDirectory()) walk(p);
      else out[p] = fs.readFileSync(path.join(dir, p));
    }
  };
  walk('');
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}
