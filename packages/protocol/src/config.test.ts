import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  flag,
  integer,
  optionalText,
  optionalUrl,
  parseEnv,
  parseSettings,
  positiveInt,
  settingName,
} from './config.js';

const Schema = z.object({
  PORT: integer(8080, { max: 65535 }),
  WORKERS: positiveInt(4),
  HOME_URL: optionalUrl,
  NAME: optionalText,
  ON: flag,
});

describe('parseEnv', () => {
  it('applies defaults and freezes the result', () => {
    const config = parseEnv(Schema, {}, 'test settings');
    expect(config).toEqual({ PORT: 8080, WORKERS: 4, HOME_URL: undefined, NAME: undefined, ON: false });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('coerces and trims; blank is unset', () => {
    const config = parseEnv(
      Schema,
      { PORT: '0', WORKERS: '2', HOME_URL: ' ', NAME: '  hub ', ON: '1' },
      'test settings',
    );
    expect(config).toEqual({ PORT: 0, WORKERS: 2, HOME_URL: undefined, NAME: 'hub', ON: true });
  });

  it('names every bad variable, after the label', () => {
    let error: unknown;
    try {
      parseEnv(Schema, { PORT: '70000', WORKERS: '0', HOME_URL: 'nope', ON: 'yes' }, 'test settings');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/^Invalid test settings: /);
    for (const name of ['PORT', 'WORKERS', 'HOME_URL', 'ON']) expect(message).toContain(`${name}:`);
  });
});

describe('parseSettings', () => {
  it('names each setting in camelCase, frozen, with the same validation as parseEnv', () => {
    const settings = parseSettings(Schema, { HOME_URL: 'https://hub.example', ON: 'true' }, 'test settings');
    expect(settings).toEqual({
      port: 8080,
      workers: 4,
      homeUrl: 'https://hub.example',
      name: undefined,
      on: true,
    });
    expect(Object.isFrozen(settings)).toBe(true);
    // The compiler sees the same names the runtime makes.
    const port: number = settings.port;
    expect(port).toBe(8080);
    expect(() => parseSettings(Schema, { PORT: 'x' }, 'test settings')).toThrow(/PORT/);
  });

  it('turns variable names into setting names', () => {
    expect(settingName('CRAWL_LOCK_DURATION_MS')).toBe('crawlLockDurationMs');
    expect(settingName('GITHUB_APP_ID')).toBe('githubAppId');
    expect(settingName('PORT')).toBe('port');
    expect(settingName('S3_BUCKET')).toBe('s3Bucket');
  });
});
