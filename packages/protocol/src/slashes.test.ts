import { describe, expect, it } from 'vitest';
import { trimEdgeSlashes, trimTrailingSlashes } from './slashes.js';

describe('slashes', () => {
  it('trims the slashes a text ends with, and only those', () => {
    expect(trimTrailingSlashes('https://hub.example.org///')).toBe('https://hub.example.org');
    expect(trimTrailingSlashes('https://hub.example.org')).toBe('https://hub.example.org');
    expect(trimTrailingSlashes('/a/b/')).toBe('/a/b');
    expect(trimTrailingSlashes('///')).toBe('');
  });

  it('trims the slashes at both edges of a path', () => {
    expect(trimEdgeSlashes('//skills/pdf//')).toBe('skills/pdf');
    expect(trimEdgeSlashes('skills//pdf')).toBe('skills//pdf');
    expect(trimEdgeSlashes('/')).toBe('');
  });

  it('takes linear time on a long run of slashes', () => {
    const slashes = `a${'/'.repeat(262_144)}b${'/'.repeat(262_144)}`;
    expect(trimTrailingSlashes(slashes)).toBe(`a${'/'.repeat(262_144)}b`);
    expect(trimEdgeSlashes(`${slashes}`)).toBe(`a${'/'.repeat(262_144)}b`);
  });
});
