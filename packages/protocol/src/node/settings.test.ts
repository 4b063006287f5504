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
