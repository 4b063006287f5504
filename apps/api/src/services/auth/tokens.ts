import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every token starts with this, so secret scanners (and people) can recognise a leaked one. */
export const TOKEN_PREFIX = 'ask_';
/** Random bytes per token: 256 bits. */
const TOKEN_BYTES = 32;
/** Characters of the base62 body: 32 bytes need at most 43 base62 digits. */
const BODY_LENGTH = 43;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_SHAPE = /^ask_[0-9A-Za-z]{43}$/;
/** How much of a token is kept in clear to tell tokens apart in lists (`ask_` + 6). */
const DISPLAY_PREFIX_LENGTH = 10;

/** What a token may do; `admin` implies the others. */
export const SCOPES = ['read', 'publish', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** True when `s` names a scope. */
export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** True when the scopes grant `needed` (`admin` grants everything). */
export function scopesGrant(scopes: readonly string[], needed: Scope): boolean {
  return scopes.includes(needed) || scopes.includes('admin');
}

/** A new token: the secret (shown once), its display prefix and the hash that is stored. */
export interface NewToken {
  secret: string;
  prefix: string;
  hash: string;
}

/**
 * Generates a token: `ask_` + 32 random bytes in base62 (no `-`/`_`, so a double-click selects it whole).
 * Hand-written base62 because it is ten lines and no dependency offers just this.
 */
export function generateToken(): NewToken {
  let n = BigInt(`0x${randomBytes(TOKEN_BYTES).toString('hex')}`);
  let body = '';
  while (n > 0n) {
    body = BASE62[Number(n % 62n)] + body;
    n /= 62n;
  }
  const secret = TOKEN_PREFIX + body.padStart(BODY_LENGTH, '0');
  return { secret, prefix: displayPrefix(secret), hash: hashToken(secret) };
}

/** sha256 (hex) of a token: the only form in which tokens are stored. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The start of a token kept in clear for listings. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** True when `text` has the shape of a token (cheap check before any database work). */
export function looksLikeToken(text: string): boolean {
  return TOKEN_SHAPE.test(text);
}

/** Constant-time comparison of two hex hashes of equal length. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** Outcome of reading the Authorization header. */
export type BearerResult =
  | { kind: 'none' }
  | { kind: 'token'; secret: string }
  | { kind: 'malformed'; reason: string };

/** Reads `Authorization: Bearer ask_...`; never echoes the header's value in a reason. */
export function readBearer(header: string | string[] | undefined): BearerResult {
  if (header === undefined || header === '') return { kind: 'none' };
  if (Array.isArray(header)) return { kind: 'malformed', reason: 'Send one Authorization header.' };
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) return { kind: 'malformed', reason: 'Use "Authorization: Bearer ask_..." with a hub token.' };
  const secret = match[1] as string;
  if (!looksLikeToken(secret)) {
    return {
      kind: 'malformed',
      reason: 'The bearer token is not a hub token (ask_ followed by 43 letters and digits).',
    };
  }
  return { kind: 'token', secret };
}
