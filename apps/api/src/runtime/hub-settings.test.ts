import { generateKeyPairSync } from 'node:crypto';
import { CrawlerSettingsSchema, loadSettings } from '@atskills/crawler';
import { GithubAuthEnvSchema } from '@atskills/github-auth';
import { ConfigError, type Env } from '@atskills/protocol/config';
import { describe, expect, it } from 'vitest';
import { HubEnvSchema, loadConfig } from '../config.js';
import { HubProcessSchema, loadHubSettings } from './hub-settings.js';
import { loadOpsConfig, OpsEnvSchema } from './ops-config.js';

/** An environment that counts how often each variable is read. */
function countingEnv(values: Env) {
  const reads = new Map<string, number>();
  const env = new Proxy(values, {
    get(target, key) {
      if (typeof key === 'string') reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(target, key);
    },
  });
  return { env, reads };
}

const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

const ENV: Env = {
  PORT: '9090',
  DATABASE_URL: 'postgres://hub@127.0.0.1:5432/hub',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '7',
  SHUTDOWN_TIMEOUT_MS: '5000',
  CRAWL_CONCURRENCY: '3',
  GITHUB_TOKEN: 'ghp_x',
  GITHUB_APP_ID: '12',
  GITHUB_APP_PRIVATE_KEY: privateKey,
  LINK_TOKEN_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
};

describe('loadHubSettings', () => {
  it('is one schema: the union of the hub, runtime, crawler and linked-repository variables', () => {
    const parts = [HubEnvSchema, OpsEnvSchema, CrawlerSettingsSchema, GithubAuthEnvSchema];
    const union = new Set(parts.flatMap((schema) => Object.keys(schema.shape)));
    expect(Object.keys(HubProcessSchema.shape).sort()).toEqual([...union].sort());
    // A variable two parts share is parsed by the hub's own schema object (one type, one default).
    for (const [name, schema] of Object.entries(HubEnvSchema.shape)) {
      expect(HubProcessSchema.shape[name as keyof typeof HubProcessSchema.shape]).toBe(schema);
    }
  });

  it('reads each variable of the environment once', () => {
    const { env, reads } = countingEnv({ ...ENV });
    loadHubSettings(env);
    const variables = Object.keys(HubProcessSchema.shape);
    expect(Object.fromEntries(variables.map((name) => [name, reads.get(name)]))).toEqual(
      Object.fromEntries(variables.map((name) => [name, 1])),
    );
    expect([...reads.keys()].filter((name) => !variables.includes(name))).toEqual([]);
  });

  it('hands each part what its own loader would, and checks the GitHub App once for both users', () => {
    const settings = loadHubSettings(ENV);
    expect(settings.config).toEqual(loadConfig(ENV));
    expect(settings.ops).toEqual(loadOpsConfig(ENV));
    expect(settings.crawler).toEqual(loadSettings(ENV));
    expect(settings.crawler.githubAuth).toBe(settings.config.github.auth);
    expect(settings.config.github.auth.app?.appId).toBe('12');
    expect(settings.crawler).toMatchObject({
      crawlConcurrency: 3,
      shutdownTimeoutMs: 5000,
      logLevel: 'warn',
    });
    expect(Object.keys(settings.ops)).not.toContain('port');
    expect(Object.keys(settings.crawler)).not.toContain('rateLimitMax');
    for (const part of [settings, settings.config, settings.ops, settings.crawler]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
  });

  it('fails start-up naming the variable, whichever part reads it', () => {
    expect(() => loadHubSettings({ PORT: 'eighty' })).toThrow(/^Invalid configuration: PORT: /);
    expect(() => loadHubSettings({ RATE_LIMIT_MAX: 'many' })).toThrow(
      /^Invalid configuration: RATE_LIMIT_MAX/,
    );
    // A window @fastify/rate-limit cannot read failed every request with a 500 instead.
    for (const window of ['banana', '1m30s', '-1s', '0'])
      expect(() => loadHubSettings({ RATE_LIMIT_WINDOW: window }), window).toThrow(
        /^Invalid configuration: RATE_LIMIT_WINDOW: .* is no duration/,
      );
    expect(loadOpsConfig({ RATE_LIMIT_WINDOW: '30s' }).rateLimitWindow).toBe(30_000);
    expect(loadOpsConfig({}).rateLimitWindow).toBe(60_000);
    expect(() => loadHubSettings({ CRAWL_CONCURRENCY: '0' })).toThrow(
      /^Invalid configuration: CRAWL_CONCURRENCY/,
    );
    expect(() => loadHubSettings({ GITHUB_APP_ID: '12' })).toThrow(ConfigError);
    expect(() => loadHubSettings({ GITHUB_APP_ID: '12' })).toThrow(
      /^Invalid configuration: GITHUB_APP_PRIVATE_KEY/,
    );
  });
});

describe('settings accepted silently before', () => {
  it('refuses a CORS_ORIGINS entry that is no origin, naming the variable, and keeps real ones', () => {
    for (const bad of ['notanorigin', 'app.example.com', 'https://app.example.com/path', '*,ftp://x.org']) {
      expect(() => loadOpsConfig({ CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS: .*is no origin/);
      expect(() => loadHubSettings({ CORS_ORIGINS: bad })).toThrow(ConfigError);
    }
    // As a browser sends them: the host lowercased, no trailing slash.
    expect(
      loadOpsConfig({ CORS_ORIGINS: 'https://App.example.com/, http://localhost:3000' }).corsOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:3000']);
    expect(loadOpsConfig({}).corsOrigins).toEqual(['*']);
  });

  it('refuses EMBEDDINGS_MODEL or EMBEDDINGS_API_KEY without EMBEDDINGS_URL', () => {
    expect(() => loadConfig({ EMBEDDINGS_MODEL: 'foo' })).toThrow(/EMBEDDINGS_MODEL: set EMBEDDINGS_URL/);
    expect(() => loadHubSettings({ EMBEDDINGS_API_KEY: 'x' })).toThrow(
      /EMBEDDINGS_API_KEY: set EMBEDDINGS_URL/,
    );
    expect(
      loadConfig({ EMBEDDINGS_URL: 'http://127.0.0.1:1', EMBEDDINGS_MODEL: 'foo', EMBEDDINGS_API_KEY: 'x' })
        .embeddings,
    ).toEqual({ url: 'http://127.0.0.1:1', model: 'foo', apiKey: 'x' });
  });
});
