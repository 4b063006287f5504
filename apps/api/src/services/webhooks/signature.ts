import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=<hex>`: GitHub's X-Hub-Signature-256 of `body` under `secret`. */
export function signWebhookBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Whether X-Hub-Signature-256 is the HMAC-SHA256 of the raw body under the secret. The comparison is
 * constant-time over the digest (timingSafeEqual on equal-length buffers), so an attacker learns nothing
 * from how long a wrong guess took; a header of the wrong shape fails before any comparison.
 */
export function verifyWebhookSignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/i.test(header)) return false;
  return signatureMatches(createHmac('sha256', secret).update(body).digest(), header);
}

/** Whether X-Hub-Signature-256 names this HMAC-SHA256 digest (computed while the body streamed). */
export function signatureMatches(expected: Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/i.test(header)) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
