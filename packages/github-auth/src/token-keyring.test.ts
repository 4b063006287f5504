import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GithubAuthSettingsError, loadGithubAuthSettings } from './settings.js';
import { TokenKeyring, TokenKeyringError } from './token-keyring.js';

const key = (id: string) => ({ id, key: randomBytes(32) });

describe('TokenKeyring', () => {
  it('seals with AES-256-GCM so that the token never appears and only its context opens it', () => {
    const ring = new TokenKeyring([key('k1')]);
    const token = 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz';
    const sealed = ring.seal(token, 'hub:acme/playbooks');
    expect(sealed.keyId).toBe('k1');
    expect(sealed.sealed).not.toContain(token.slice(11));
    expect(ring.seal(token, 'hub:acme/playbooks').sealed).not.toBe(sealed.sealed); // fresh IV each time
    expect(ring.open(sealed, 'hub:acme/playbooks')).toBe(token);
    expect(() => ring.open(sealed, 'hub:evil/playbooks')).toThrow(TokenKeyringError);
    const [v, iv, tag, ct = ''] = sealed.sealed.split('.');
    // Replace the second-to-last character (a whole 6-bit group of ciphertext) with a different one.
    const flipped = `${v}.${iv}.${tag}.${ct.slice(0, -2)}${ct.at(-2) === 'A' ? 'B' : 'A'}${ct.slice(-1)}`;
    expect(() => ring.open({ ...sealed, sealed: flipped }, 'hub:acme/playbooks')).toThrow(TokenKeyringError);
  });

  it('rotates: a new first key seals, old keys still open, reseal moves tokens to the new key', () => {
    const old = key('k1');
    const sealed = new TokenKeyring([old]).seal('tok', 'ctx');
    const ring = new TokenKeyring([key('k2'), old]);
    expect(ring.open(sealed, 'ctx')).toBe('tok');
    const moved = ring.reseal(sealed, 'ctx');
    expect(moved?.keyId).toBe('k2');
    expect(ring.reseal(moved!, 'ctx')).toBeUndefined();
    expect(() => new TokenKeyring([key('k2')]).open(sealed, 'ctx')).toThrow(/k1/);
  });
});

describe('loadGithubAuthSettings', () => {
  it('parses keys and names the variable of a bad value without echoing it', () => {
    const b64 = randomBytes(32).toString('base64');
    const settings = loadGithubAuthSettings({ LINK_TOKEN_KEYS: `k2:${b64}, k1:${b64}` });
    expect(settings.tokenKeys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(settings.app).toBeNull();
    expect(() => loadGithubAuthSettings({ LINK_TOKEN_KEYS: 'k1:c2hvcnQ=' })).toThrow(/LINK_TOKEN_KEYS/);
    expect(() => loadGithubAuthSettings({ GITHUB_APP_ID: '12' })).toThrow(GithubAuthSettingsError);
    expect(() =>
      loadGithubAuthSettings({ GITHUB_APP_ID: '12', GITHUB_APP_PRIVATE_KEY: 'secret-junk' }),
    ).toThrow(/GITHUB_APP_PRIVATE_KEY: not an RSA/);
    // The App's webhook secret or slug without the App: its deliveries would all be refused as unconfigured.
    expect(() => loadGithubAuthSettings({ GITHUB_APP_WEBHOOK_SECRET: 'a-secret-of-enough-length' })).toThrow(
      /^GITHUB_APP_WEBHOOK_SECRET: set with GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY/,
    );
    expect(() => loadGithubAuthSettings({ GITHUB_APP_SLUG: 'acme-skills' })).toThrow(/GITHUB_APP_SLUG/);
  });
});
