/**
 * The client's HTTP requests to the hub, over node:http/node:https rather than the global fetch.
 *
 * Why not fetch: Node's fetch is undici, whose HTTP parser is llhttp compiled to WebAssembly. Loading it
 * compiles that module, and V8 keeps optimising it on background threads; when the event loop empties, Node
 * waits for those background compile jobs before it exits. For a one-request CLI run (`atskills get` on a
 * warm cache: one 304 probe) that cost ~0.15 s before the answer and ~0.3-0.5 s after it on a loaded 2-core
 * machine - more than everything else the run does. node:http parses with the native llhttp: no WebAssembly,
 * nothing left to wait for, and the idle keep-alive socket it pools does not hold the process open.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import { request as plainRequest } from 'node:http';
import { createRequire } from 'node:module';

/** One answer, its body read whole and decoded from its Content-Encoding. */
export interface HttpAnswer {
  status: number;
  /** True for 2xx. */
  ok: boolean;
  /** The URL that answered, after redirects. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What one request sends and how long it may take. */
export interface HttpRequestOptions {
  method?: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  /** Header names in lower case. */
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Deadline of the whole exchange: connecting, redirects and reading the body. */
  timeoutMs: number;
  /** Largest body accepted, as sent and once decoded; a larger one fails as `too-large`. */
  maxBodyBytes?: number;
}

/** Why a request has no answer: the server was not reached (or went silent), its body was too large, or it was unreadable. */
export type HttpFailureCode = 'unreachable' | 'too-large' | 'bad-answer';

/** A request that ended without a complete answer. */
export class HttpRequestError extends Error {
  constructor(
    readonly code: HttpFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'HttpRequestError';
  }
}

/** Redirects followed before giving up (fetch's limit). */
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The value of a response header (repeated headers joined by ", "), or undefined. */
export function headerOf(answer: HttpAnswer, name: string): string | undefined {
  const value = answer.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * One request, following redirects as fetch does (303 becomes GET; Authorization is not carried to another
 * origin), with the body read whole. Fails with HttpRequestError only; any status is an answer.
 */
export async function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  const deadline = Date.now() + options.timeoutMs;
  const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br', ...options.headers };
  let target = new URL(url);
  let method = options.method ?? 'GET';
  let body = options.body;
  for (let hop = 0; ; hop++) {
    const answer = await exchange(target, { method, headers, body, deadline, options });
    const location = headerOf(answer, 'location');
    if (!REDIRECT_STATUSES.has(answer.status) || !location) return answer;
    if (hop === MAX_REDIRECTS)
      throw new HttpRequestError('bad-answer', `more than ${MAX_REDIRECTS} redirects from ${url}`);
    const next = new URL(location, target);
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw new HttpRequestError('bad-answer', `redirected to ${next.protocol} URL ${next.href}`);
    if (answer.status === 303 && method !== 'GET' && method !== 'HEAD') {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
    }
    if (next.origin !== target.origin) delete headers.authorization;
    target = next;
  }
}

interface Exchange {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
  /** Epoch ms by which the whole request (all hops) must be done. */
  deadline: number;
  options: HttpRequestOptions;
}

/** One hop: sends the request, reads the whole response, decodes it. */
async function exchange(target: URL, hop: Exchange): Promise<HttpAnswer> {
  // node:https loads TLS; only a hub on https: needs it.
  const send = target.protocol === 'https:' ? (await import('node:https')).request : plainRequest;
  const limit = hop.options.maxBodyBytes;
  const headers = { ...hop.headers };
  if (hop.body) headers['content-length'] = String(hop.body.byteLength);
  const requestOptions: RequestOptions = { method: hop.method, headers };
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (error: HttpRequestError | undefined, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(answer!);
    };
    const remaining = Math.max(0, hop.deadline - Date.now());
    const timer = setTimeout(
      () =>
        finish(
          new HttpRequestError(
            'unreachable',
            `no complete answer within ${Math.round(hop.options.timeoutMs / 100) / 10} s`,
          ),
        ),
      remaining,
    );
    const req = send(target, requestOptions, (res: IncomingMessage) => {
      const declared = Number(res.headers['content-length'] ?? 0);
      if (limit !== undefined && declared > limit) {
        finish(new HttpRequestError('too-large', `the body is larger than ${limit} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (limit !== undefined && received > limit) {
          finish(new HttpRequestError('too-large', `the body is larger than ${limit} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error) => finish(unreachable(error)));
      res.on('close', () => {
        if (!res.complete)
          finish(new HttpRequestError('unreachable', 'the connection closed in the middle of the answer'));
      });
      res.on('end', () => {
        let body: Buffer;
        try {
          body = decode(Buffer.concat(chunks), res.headers['content-encoding'], limit);
        } catch (error) {
          finish(error as HttpRequestError);
          return;
        }
        const status = res.statusCode ?? 0;
        finish(undefined, {
          status,
          ok: status >= 200 && status < 300,
          url: target.href,
          headers: res.headers,
          body,
        });
      });
    });
    req.on('error', (error) => finish(unreachable(error)));
    req.end(hop.body);
  });
}

function loadZlib(): typeof import('node:zlib') {
  return createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib');
}

/** Undoes the Content-Encoding the server applied (we asked for gzip, deflate or br). */
function decode(body: Buffer, encoding: string | undefined, limit: number | undefined): Buffer {
  const coding = encoding?.trim().toLowerCase();
  if (!coding || coding === 'identity' || body.length === 0) return body;
  // zlib is loaded only for an encoded body: a 304 probe (the client's common start-up path) has none.
  const { brotliDecompressSync, gunzipSync, inflateSync } = loadZlib();
  const bounds = limit !== undefined ? { maxOutputLength: limit } : {};
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return gunzipSync(body, bounds);
    if (coding === 'deflate') return inflateSync(body, bounds);
    if (coding === 'br') return brotliDecompressSync(body, bounds);
  } catch (error) {
    if (error instanceof RangeError)
      throw new HttpRequestError('too-large', `the body decodes to more than ${limit} bytes`);
    throw new HttpRequestError('bad-answer', `the body is not valid ${coding} (${(error as Error).message})`);
  }
  throw new HttpRequestError('bad-answer', `the body has an encoding this client cannot read (${coding})`);
}

/** A socket or DNS failure, named by its message ("connect ECONNREFUSED 127.0.0.1:8080"). */
function unreachable(error: Error): HttpRequestError {
  return new HttpRequestError(
    'unreachable',
    error.message || (error as NodeJS.ErrnoException).code || 'failed',
  );
}
