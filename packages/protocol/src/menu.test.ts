import { describe, expect, it } from 'vitest';
import { renderMenu } from './menu.js';

describe('renderMenu', () => {
  it('renders one identity line per item, folding multi-line descriptions', () => {
    expect(
      renderMenu([
        { identity: 'gh:o/r/a', name: 'a', description: 'First.' },
        { identity: 'gh:o/r/b', description: 'Two\nlines.' },
      ]),
    ).toBe('- gh:o/r/a: First.\n- gh:o/r/b: Two lines.');
    expect(renderMenu([])).toBe('');
  });
});
