import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@atskills/protocol/config';
import { describe, expect, it } from 'vitest';
import { loadSettings } from './config.js';

describe('loadSettings', () => {
  it('applies defaults', () => {
    const settings = loadSettings({});
    expect(settings).toMatchObject({
      githubApiUrl: 'https://api.github.com',
      gitBaseUrl: 'https://github.com',
      crawlMaxFileBytes: 1024 * 1024,
    });
    expect(settings.githubToken).toBeUndefined();
    expect(Object.isFrozen(settings)).toBe(true);
  });

  it('fails fast naming the variable', () => {
    expect(() => loadSettings({ CRAWL_CONCURRENCY: 'many' })).toThrow(ConfigError);
    expect(() => loadSettings({ GITHUB_API_URL: 'not a url' })).toThrow(/GITHUB_API_URL/);
    expect(() => loadSettings({ DATABASE_URL: 'not a url' })).toThrow(
      /^Invalid crawler settings: DATABASE_URL/,
    );
  });

  it('refuses a work folder crawls could not clone into', () => {
    expect(loadSettings({ CRAWL_WORK_DIR: tmpdir() }).crawlWorkDir).toBe(tmpdir());
    expect(() => loadSettings({ CRAWL_WORK_DIR: '/no/such/folder' })).toThrow(
      /CRAWL_WORK_DIR: must be an existing folder this process can write to/,
    );
    expect(() => loadSettings({ CRAWL_WORK_DIR: fileURLToPath(import.meta.url) })).toThrow(/CRAWL_WORK_DIR/);
  });

  it('reads the shutdown deadline the hub reads', () => {
    expect(loadSettings({}).shutdownTimeoutMs).toBe(25_000);
    expect(loadSettings({ SHUTDOWN_TIMEOUT_MS: '5000' }).shutdownTimeoutMs).toBe(5_000);
  });

  it("checks the linked repositories' settings once, at start-up, naming a bad variable", () => {
    const key = Buffer.alloc(32, 3).toString('base64');
    expect(
      loadSettings({ LINK_TOKEN_KEYS: `k2:${key},k1:${key}` }).githubAuth.tokenKeys.map((k) => k.id),
    ).toEqual(['k2', 'k1']);
    expect(loadSettings({}).githubAuth).toEqual({ app: null, tokenKeys: [] });
    expect(() => loadSettings({ GITHUB_APP_ID: '12' })).toThrow(ConfigError);
    expect(() => loadSettings({ GITHUB_APP_ID: '12' })).toThrow(
      /^Invalid crawler settings: GITHUB_APP_PRIVATE_KEY/,
    );
    expect(() => loadSettings({ LINK_TOKEN_KEYS: 'k1:c2hvcnQ=' })).toThrow(
      /^Invalid crawler settings: LINK_TOKEN_KEYS/,
    );
  });
});
