import { describe, expect, it } from 'vitest';
import { classifyGitFailure } from './run-git.js';

describe('classifyGitFailure', () => {
  it.each([
    ["fatal: repository 'http://h/o/r.git/' not found", 'not-found'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 403", 'access-denied'],
    ["fatal: could not read Username for 'https://github.com': terminal prompts disabled", 'access-denied'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 429", 'rate-limited'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 503", 'unavailable'],
    [
      "fatal: unable to access 'http://h/': Failed to connect to h port 80: Connection refused",
      'unavailable',
    ],
    ['fatal: bad object deadbeef', 'other'],
  ])('%s -> %s', (stderr, kind) => {
    expect(classifyGitFailure(stderr)).toBe(kind);
  });
});
