import { describe, expect, it } from 'vitest';
import { generateToken, hashesEqual, hashToken, readBearer, scopesGrant } from './tokens.js';

describe('tokens', () => {
  it('are ask_ + 43 base62 characters, distinct, stored as sha256', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a.secret).toMatch(/^ask_[0-9A-Za-z]{43}$/);
    expect(a.secret).not.toBe(b.secret);
    expect(a.hash).toBe(hashToken(a.secret));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.prefix).toBe(a.secret.slice(0, 10));
  });

  it('compare hashes in constant time and never equal on different or empty input', () => {
    const { hash } = generateToken();
    expect(hashesEqual(hash, hash)).toBe(true);
    expect(hashesEqual(hash, hashToken('other'))).toBe(false);
    expect(hashesEqual('', '')).toBe(false);
  });

  it('read the Authorization header without echoing it', () => {
    const { secret } = generateToken();
    expect(readBearer(undefined)).toEqual({ kind: 'none' });
    expect(readBearer(`Bearer ${secret}`)).toEqual({ kind: 'token', secret });
    expect(readBearer(`bearer  ${secret}`)).toEqual({ kind: 'token', secret });
    for (const bad of ['Basic dXNlcjpwYXNz', 'Bearer hunter2', `Bearer ${secret} extra`, `Token ${secret}`]) {
      const result = readBearer(bad);
      expect(result.kind).toBe('malformed');
      expect(JSON.stringify(result)).not.toContain(bad.split(' ')[1]);
    }
    expect(readBearer([`Bearer ${secret}`, `Bearer ${secret}`]).kind).toBe('malformed');
  });

  it('admin grants every scope', () => {
    expect(scopesGrant(['admin'], 'publish')).toBe(true);
    expect(scopesGrant(['read'], 'publish')).toBe(false);
    expect(scopesGrant(['publish'], 'read')).toBe(false);
  });
});
