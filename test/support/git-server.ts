/**
 * Real git over smart HTTP for tests, demos and benchmarks: `git http-backend` (CGI) behind a small
 * Node HTTP server on 127.0.0.1, serving `<root>/<owner>/<repo>.git` at `<baseUrl>/<owner>/<repo>.git`.
 * Every request is logged (method, path, git command, bytes) so tests can assert e.g. that a revision
 * probe fetched no pack. Hand-written because no maintained npm package wraps http-backend with a
 * request log, auth and fault injection; the git protocol itself is entirely real git.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type GitCommand = 'info-refs' | 'ls-refs' | 'fetch' | 'upload-pack' | 'receive-pack' | 'other';

export interface GitRequestLog {
  method: string;
  /** Path below the base URL, e.g. `/owner/repo.git/git-upload-pack`. */
  path: string;
  /** `owner/repo` the request addressed. */
  repo: string;
  /** What git was asked: protocol v2 `ls-refs` (a probe) or `fetch` (a pack download), etc. */
  command: GitCommand;
  status: number;
  bytesIn: number;
  bytesOut: number;
  /** True when the response carried a packfile (a fetch that downloaded objects). */
  pack: boolean;
  authorization?: string;
}

export interface GitServerOptions {
  /** Folder that holds `<owner>/<repo>.git`. */
  root: string;
  /** Port to listen on; 0 picks a free one. */
  port?: number;
  /**
   * Decides access per request; return 401 (no credentials), 403 or 404 to refuse. Used by tests of
   * private repositories and of tokens sent on `ls-remote` and fetches.
   */
  authorize?: (repo: string, authorization: string | undefined) => 200 | 401 | 403 | 404;
}

/** A running smart-HTTP git server. */
export interface GitServer {
  baseUrl: string;
  port: number;
  root: string;
  log: GitRequestLog[];
  /** Clears the request log. */
  resetLog(): void;
  /** Delays every answer by `ms` (0 = off); `Infinity` makes requests hang until the client gives up. */
  setDelay(ms: number): void;
  /** Makes every request fail with this HTTP status (null = normal service). */
  setFailure(status: number | null): void;
  /** Stops listening (cached clients then see the server as down); `start` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

function commandOf(method: string, urlPath: string, query: string, body: Buffer): GitCommand {
  if (urlPath.endsWith('/info/refs')) return 'info-refs';
  if (urlPath.endsWith('/git-receive-pack')) return 'receive-pack';
  if (method === 'POST' && urlPath.endsWith('/git-upload-pack')) {
    const text = body.toString('latin1');
    if (text.includes('command=ls-refs')) return 'ls-refs';
    if (text.includes('command=fetch') || text.includes('want ')) return 'fetch';
    return 'upload-pack';
  }
  return query.includes('service=') ? 'info-refs' : 'other';
}

/** Starts a git smart-HTTP server over the bare repositories under `options.root`. */
export async function startGitServer(options: GitServerOptions): Promise<GitServer> {
  const log: GitRequestLog[] = [];
  let delayMs = 0;
  let failure: number | null = null;
  const sockets = new Set<import('node:net').Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const urlPath = decodeURIComponent(url.pathname);
    const match = /^\/([^/]+)\/([^/]+?)(?:\.git)?(\/.*)$/.exec(urlPath);
    const repo = match ? `${match[1]}/${match[2]}` : '';
    const encoding = req.headers['content-encoding'];
    let inspected = rawBody;
    if (encoding === 'gzip') {
      try {
        inspected = gunzipSync(rawBody);
      } catch {
        inspected = rawBody;
      }
    }
    const entry: GitRequestLog = {
      method: req.method ?? 'GET',
      path: urlPath,
      repo,
      command: commandOf(req.method ?? 'GET', urlPath, url.search, inspected),
      status: 0,
      bytesIn: rawBody.length,
      bytesOut: 0,
      pack: false,
      authorization: req.headers.authorization,
    };
    log.push(entry);

    if (delayMs === Number.POSITIVE_INFINITY) return; // hang: never answer
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (failure !== null) {
      entry.status = failure;
      res.writeHead(failure, { 'content-type': 'text/plain' }).end('injected failure\n');
      return;
    }
    if (!match) {
      entry.status = 404;
      res.writeHead(404).end('not a repository path\n');
      return;
    }
    const verdict = options.authorize?.(repo, req.headers.authorization) ?? 200;
    if (verdict !== 200) {
      entry.status = verdict;
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      if (verdict === 401) headers['www-authenticate'] = 'Basic realm="git"';
      res.writeHead(verdict, headers).end('access refused\n');
      return;
    }

    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: options.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_COUNT: '3',
        GIT_CONFIG_KEY_0: 'uploadpack.allowFilter',
        GIT_CONFIG_VALUE_0: 'true',
        GIT_CONFIG_KEY_1: 'uploadpack.allowAnySHA1InWant',
        GIT_CONFIG_VALUE_1: 'true',
        GIT_CONFIG_KEY_2: 'http.receivepack',
        GIT_CONFIG_VALUE_2: 'true',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: `/${match[1]}/${match[2]}.git${match[3]}`,
        QUERY_STRING: url.search.replace(/^\?/, ''),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        CONTENT_LENGTH: String(rawBody.length),
        HTTP_CONTENT_ENCODING: typeof encoding === 'string' ? encoding : '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
        REMOTE_USER: 'test',
      },
    });
    // http-backend may exit before reading its input (a refused or failed request): that EPIPE is the
    // request's problem, not the server's, and must not crash the process hosting the server.
    child.stdin.on('error', () => {});
    child.stdin.end(rawBody);
    let headerBuf = Buffer.alloc(0);
    let headersSent = false;
    child.stdout.on('data', (data: Buffer) => {
      if (headersSent) {
        entry.bytesOut += data.length;
        if (!entry.pack && data.includes('PACK')) entry.pack = true;
        res.write(data);
        return;
      }
      headerBuf = Buffer.concat([headerBuf, data]);
      const end = headerBuf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = headerBuf.subarray(0, end).toString('latin1');
      const rest = headerBuf.subarray(end + 4);
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n')) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      entry.status = status;
      res.writeHead(status, headers);
      headersSent = true;
      entry.bytesOut += rest.length;
      if (rest.includes('PACK')) entry.pack = true;
      res.write(rest);
    });
    child.stderr.resume();
    child.on('close', () => {
      if (!headersSent) {
        entry.status = 500;
        res.writeHead(500).end('git http-backend failed\n');
      } else res.end();
    });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  let port = options.port ?? 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  await listen();

  return {
    get baseUrl() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    root: options.root,
    log,
    resetLog: () => {
      log.length = 0;
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    setFailure: (status) => {
      failure = status;
    },
    stop,
    start: listen,
    close: stop,
  };
}
