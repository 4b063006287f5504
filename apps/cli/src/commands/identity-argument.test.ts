// A command's identity argument with reference suffixes (SPEC 1.3: `:save` and `:install`, each at most once).
import { describe, expect, it } from 'vitest';
import { identityArgument } from './identity-argument.js';

describe('identityArgument', () => {
  it('drops the suffixes a command means, in either order', () => {
    expect(identityArgument('hub:acme/x/y', 'install', ['install'])).toBe('hub:acme/x/y');
    expect(identityArgument('hub:acme/x/y:install', 'install', ['install'])).toBe('hub:acme/x/y');
    expect(identityArgument('hub:acme/x/y:install:save', 'save', ['save', 'install'])).toBe('hub:acme/x/y');
  });

  it('refuses a suffix written twice, whichever suffixes the command takes', () => {
    for (const text of [
      'hub:acme/x/y:save:save',
      'hub:acme/x/y:install:install',
      'hub:acme/x/y:save:install:save',
      'hub:acme/x/y:install:save:save',
    ])
      expect(() => identityArgument(text, 'save', ['save', 'install']), text).toThrow(
        `\`save\` takes an identity; "${text}" repeats a reference suffix (:save and :install are each written at most once, and only in @skills: references in a message).`,
      );
  });
});
