import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ProblemCode, problem } from '../problems.js';
import { signatureMatches, verifyWebhookSignature } from '../services/webhooks/signature.js';

/** GitHub sends payloads up to 25 MB: the limit of a delivery whose signature header has the right shape. */
export const SIGNED_BODY_LIMIT = 25 * 1024 * 1024;

/** A body up to this size streams without holding any of the shared large-body budget. */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * Bytes of webhook bodies over SMALL_BODY_BYTES held at once across both webhook routes. A signature can
 * only be checked once the whole body is read, so a forged signature of the right shape still costs the
 * bytes it streams; this bounds what many of them cost together (GitHub's deliveries are almost always
 * far smaller than 64 KB).
 */
export const LARGE_BODY_BUDGET = 32 * 1024 * 1024;

const SIGNATURE_SHAPE = /^sha256=[0-9a-f]{64}$/i;

/** The large-body bytes held now (one budget for the process: both routes share it). */
const held = { bytes: 0 };

/** What each route answers when it refuses a delivery. */
export interface WebhookBodyOptions {
  /** The secret deliveries are signed with (read per request: tests build hubs with and without it). */
  secret: (app: FastifyInstance) => string | undefined;
  /** The detail of the 503 when no secret is configured. */
  unconfigured: string;
  /** The problem code of a missing or wrong signature (401). */
  badSignature: ProblemCode;
}

/** Refusals close the connection: whatever the client still sends is not read. */
const CLOSE = { connection: 'close' };

/**
 * Raw, verified webhook bodies in the calling plugin's scope (SPEC 2.6; issue 24 finding 8). Before a
 * byte of the body is read, the headers decide: no configured secret answers 503, a missing or malformed
 * X-Hub-Signature-256 answers 401, a Content-Length over 25 MB answers 413, each closing the connection,
 * so an unsigned body is never buffered. A well-formed signature gets the body streamed through the HMAC
 * (413 as soon as it passes 25 MB; 503 when the shared large-body budget is spent), and the handler sees
 * `request.body` only once the digest matched (401 otherwise).
 */
export function verifiedWebhookBodies(app: FastifyInstance, options: WebhookBodyOptions): void {
  const reservations = new WeakMap<FastifyRequest, number>();
  const release = (request: FastifyRequest) => {
    held.bytes -= reservations.get(request) ?? 0;
    reservations.delete(request);
  };

  app.addHook('onRequest', async (request) => {
    const secret = options.secret(app);
    if (!secret) throw problem('unavailable', options.unconfigured, {}, CLOSE);
    const signature = request.headers['x-hub-signature-256'];
    if (typeof signature !== 'string' || !SIGNATURE_SHAPE.test(signature)) {
      throw problem(
        options.badSignature,
        'X-Hub-Signature-256 is missing or is not sha256=<64 hex digits>; the body was not read',
        {},
        CLOSE,
      );
    }
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > SIGNED_BODY_LIMIT) {
      throw problem(
        'payload-too-large',
        `A delivery is at most ${SIGNED_BODY_LIMIT} bytes (GitHub's limit)`,
        {},
        CLOSE,
      );
    }
  });
  app.addHook('onResponse', async (request) => release(request));

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const secret = options.secret(app) ?? '';
    const header = String(request.headers['x-hub-signature-256']);
    const hmac = createHmac('sha256', secret);
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const refuse = (error: Error) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      payload.removeAllListeners('data');
      release(request);
      done(error, undefined);
    };
    payload.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > SIGNED_BODY_LIMIT) {
        refuse(problem('payload-too-large', `A delivery is at most ${SIGNED_BODY_LIMIT} bytes`, {}, CLOSE));
        return;
      }
      if (size > SMALL_BODY_BYTES) {
        const need = size - SMALL_BODY_BYTES - (reservations.get(request) ?? 0);
        if (held.bytes + need > LARGE_BODY_BUDGET) {
          refuse(
            problem(
              'unavailable',
              'Too many large webhook bodies are being received at once; redeliver shortly',
              {},
              { ...CLOSE, 'retry-after': '5' },
            ),
          );
          return;
        }
        held.bytes += need;
        reservations.set(request, (reservations.get(request) ?? 0) + need);
      }
      hmac.update(chunk);
      chunks.push(chunk);
    });
    payload.on('error', (error: Error) => refuse(error));
    payload.on('end', () => {
      if (settled) return;
      if (!signatureMatches(hmac.digest(), header)) {
        refuse(problem(options.badSignature, 'X-Hub-Signature-256 does not match the body'));
        return;
      }
      settled = true;
      const body = Buffer.concat(chunks, size);
      verified.add(body);
      done(null, body);
    });
  });
}

/** Bodies whose signature the parser checked. */
const verified = new WeakSet<Buffer>();

/**
 * The verified raw body of a delivery. A request without a body never reaches the parser: its (empty)
 * body is checked here, so every delivery the handler acts on had its signature checked.
 */
export function verifiedBody(request: FastifyRequest, secret: string, badSignature: ProblemCode): Buffer {
  if (Buffer.isBuffer(request.body) && verified.has(request.body)) return request.body;
  const empty = Buffer.alloc(0);
  if (
    request.body !== undefined ||
    !verifyWebhookSignature(secret, empty, request.headers['x-hub-signature-256'] as string)
  ) {
    throw problem(badSignature, 'X-Hub-Signature-256 does not match the body');
  }
  return empty;
}

/** Large-body bytes held now (for tests and metrics). */
export function heldWebhookBodyBytes(): number {
  return held.bytes;
}
