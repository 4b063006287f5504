import { ResolveError } from '@atskills/protocol/node';
import { describe, expect, it } from 'vitest';
import { adviceFor } from './exit-codes.js';

describe('adviceFor', () => {
  const down = new ResolveError('offline', 'The hub at http://127.0.0.1:9 cannot be reached (ECONNREFUSED).');

  it('offers --offline only to the commands that have it', () => {
    expect(adviceFor(down, 'get')).toContain('a skill already cached is served with --offline');
    expect(adviceFor(down, 'expand')).toContain('--offline');
    for (const command of ['suggest', 'search', 'publish', 'whoami', 'login', 'update', 'outdated'])
      expect(adviceFor(down, command), command).not.toContain('--offline');
  });

  it('names what to check for the command', () => {
    expect(adviceFor(down, 'suggest')).toBe(
      ' Check the network and ATSKILLS_HUB (or the hub `atskills login` stored), or try again later.',
    );
    expect(adviceFor(down, 'login')).toBe(' Check the network and the URL given to --hub.');
    expect(adviceFor(down, 'update')).toBe(' Check the network and ATSKILLS_HUB / ATSKILLS_GIT_BASE.');
    expect(adviceFor(new ResolveError('network', 'The hub failed (500): boom.'), 'suggest')).toBe('');
  });
});
