import { describe, expect, it } from 'vitest';
import { hubBaseUrl, loadSettings } from './settings.js';

describe('ATSKILLS_HUB', () => {
  it("takes the hub's origin or the reference client's <origin>/api/skills form", () => {
    for (const value of [
      'https://hub.example.org',
      'https://hub.example.org/',
      'https://hub.example.org/api/skills',
      'https://hub.example.org/api/skills/',
      ' https://hub.example.org/API/Skills ',
    ])
      expect(loadSettings({ ATSKILLS_HUB: value }).hubUrl).toBe('https://hub.example.org');
    expect(hubBaseUrl('http://127.0.0.1:8080/prefix/api/skills')).toBe('http://127.0.0.1:8080/prefix');
    expect(hubBaseUrl('http://127.0.0.1:8080/prefix')).toBe('http://127.0.0.1:8080/prefix');
  });

  it('normalizes the stored login value the same way, the environment winning', () => {
    expect(loadSettings({}, { hub: 'http://a.test/api/skills' }).hubUrl).toBe('http://a.test');
    expect(loadSettings({ ATSKILLS_HUB: 'http://b.test' }, { hub: 'http://a.test' }).hubUrl).toBe(
      'http://b.test',
    );
  });
});

describe('ATSKILLS_SUGGEST', () => {
  it('turns suggestions on (1, on: 3 of them; 2-10: that many) or off (0, off), the environment winning', () => {
    expect(loadSettings({}).suggest).toBeUndefined();
    expect(loadSettings({ ATSKILLS_SUGGEST: '1' }).suggest).toBe(3);
    expect(loadSettings({ ATSKILLS_SUGGEST: 'on' }).suggest).toBe(3);
    expect(loadSettings({ ATSKILLS_SUGGEST: '5' }).suggest).toBe(5);
    expect(loadSettings({ ATSKILLS_SUGGEST: '50' }).suggest).toBe(10);
    expect(loadSettings({ ATSKILLS_SUGGEST: '0' }, { suggest: true }).suggest).toBe(0);
    expect(loadSettings({ ATSKILLS_SUGGEST: 'OFF' }).suggest).toBe(0);
    expect(loadSettings({ ATSKILLS_SUGGEST: 'maybe' }).suggest).toBeUndefined();
    expect(loadSettings({}, { suggest: true }).suggest).toBe(3);
    expect(loadSettings({}, { suggest: 4 }).suggest).toBe(4);
    expect(loadSettings({}, { suggest: false }).suggest).toBe(0);
    expect(loadSettings({}).suggestTimeoutMs).toBe(400);
    expect(loadSettings({ ATSKILLS_SUGGEST_TIMEOUT_MS: '900' }).suggestTimeoutMs).toBe(900);
  });
});

describe('values the client cannot read', () => {
  it('are named with what is expected, and their defaults apply', () => {
    const settings = loadSettings({
      ATSKILLS_SUGGEST: 'maybe',
      ATSKILLS_PROBE_TIMEOUT_MS: '2s',
      ATSKILLS_SUGGEST_TIMEOUT_MS: '-5',
    });
    expect(settings.suggest).toBeUndefined();
    expect(settings.probeTimeoutMs).toBe(20_000);
    expect(settings.ignored).toEqual([
      'ATSKILLS_PROBE_TIMEOUT_MS="2s" (a whole number of ms above 0)',
      'ATSKILLS_SUGGEST_TIMEOUT_MS="-5" (a whole number of ms above 0)',
      'ATSKILLS_SUGGEST="maybe" (on, off or a number from 0 to 10)',
    ]);
    expect(loadSettings({ ATSKILLS_SUGGEST: ' ', ATSKILLS_FETCH_TIMEOUT_MS: '' }).ignored).toEqual([]);
  });
});

describe('the stored token', () => {
  it('goes to the hub it was stored with only, whatever spelling of it ATSKILLS_HUB uses', () => {
    const stored = { hub: 'https://hub.example.org', token: 'ask_stored' };
    expect(loadSettings({}, stored).hubToken).toBe('ask_stored');
    expect(loadSettings({ ATSKILLS_HUB: 'https://hub.example.org/api/skills/' }, stored).hubToken).toBe(
      'ask_stored',
    );
    expect(loadSettings({ ATSKILLS_HUB: 'https://other.example.org' }, stored).hubToken).toBeUndefined();
    expect(
      loadSettings({ ATSKILLS_HUB: 'https://other.example.org', ATSKILLS_TOKEN: 'ask_env' }, stored).hubToken,
    ).toBe('ask_env');
  });
});
