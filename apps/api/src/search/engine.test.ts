import { describe, expect, it } from 'vitest';
import { engineHeader } from './engine.js';

describe('engineHeader', () => {
  it('writes the X-Search-Engine header as it always read', () => {
    expect(engineHeader({ name: 'memory' })).toBe('memory');
    expect(engineHeader({ name: 'postgres', fallback: 'outage' })).toBe('postgres; fallback');
    expect(engineHeader({ name: 'postgres', fallback: 'building' })).toBe('postgres; index building');
  });
});
