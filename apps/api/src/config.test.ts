import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { SHIPPED_RERANKER } from './suggest/abstain.js';
import { rerankerFileText } from './suggest/reranker-file.js';

describe('loadConfig', () => {
  it('applies the defaults and freezes the result', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: undefined,
      meiliUrl: undefined,
      dataDir: './.data',
      logLevel: 'info',
      publicUrl: 'http://127.0.0.1:8080',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty optional URLs as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', MEILI_URL: ' ' }).databaseUrl).toBeUndefined();
  });

  it('fails fast naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => loadConfig({ MEILI_URL: 'not a url' })).toThrow(/MEILI_URL/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    // URLs of the wrong kind started and failed later (an http:// REDIS_URL was read as a socket path).
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379/5' })).toThrow(
      /REDIS_URL: must start with redis:\/\/ or rediss:\/\//,
    );
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x@127.0.0.1/db' })).toThrow(
      /DATABASE_URL: must start with postgres/,
    );
    expect(() => loadConfig({ MEILI_MASTER_KEY: 'short' })).toThrow(/MEILI_MASTER_KEY/);
    expect(loadConfig({ REDIS_URL: 'rediss://h:6380/1', DATABASE_URL: 'postgresql://u@h/db' })).toMatchObject(
      {
        redisUrl: 'rediss://h:6380/1',
        databaseUrl: 'postgresql://u@h/db',
      },
    );
  });

  it('reads SUGGEST_RERANKER at start-up, failing fast on a bad file or one that needs EMBEDDINGS_URL', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-reranker-'));
    const shipped = join(dir, 'shipped.json');
    writeFileSync(shipped, rerankerFileText(SHIPPED_RERANKER));
    expect(loadConfig({ SUGGEST_RERANKER: shipped }).suggestReranker).toEqual(SHIPPED_RERANKER);
    expect(loadConfig({}).suggestReranker).toBeUndefined();
    expect(() => loadConfig({ SUGGEST_RERANKER: join(dir, 'none.json') })).toThrow(
      /^Invalid configuration: SUGGEST_RERANKER: cannot read .*none\.json: ENOENT/,
    );
    const withService = join(dir, 'service.json');
    writeFileSync(
      withService,
      rerankerFileText({ ...SHIPPED_RERANKER, weights: { ...SHIPPED_RERANKER.weights, service: 1 } }),
    );
    expect(() => loadConfig({ SUGGEST_RERANKER: withService })).toThrow(
      /SUGGEST_RERANKER: .*EMBEDDINGS_URL is not set/,
    );
    expect(
      loadConfig({ SUGGEST_RERANKER: withService, EMBEDDINGS_URL: 'http://127.0.0.1:9/' }).suggestReranker
        ?.weights.service,
    ).toBe(1);
  });
});
