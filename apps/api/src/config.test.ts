import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

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
  });
});
