import type { Resolved } from '@atskills/protocol/node';
import { describe, expect, it } from 'vitest';
import { hubWarningLines, resolvedJson } from './resolved.js';

const skill = (extra: Partial<Resolved>): Resolved =>
  ({
    kind: 'skill',
    identity: 'gh:acme/tools/deploy',
    revision: 'r1',
    stale: false,
    origin: 'cache',
    flags: [],
    dir: '/tmp/x',
    name: 'deploy',
    description: 'Deploy.',
    body: 'Steps.',
    ...extra,
  }) as Resolved;

describe('what the hub said of its copy', () => {
  it('is one warning line per code, and part of the JSON', () => {
    const resolved = skill({ hubWarnings: ['files-left-out', 'link-stale'] });
    const lines = hubWarningLines(resolved);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^gh:acme\/tools\/deploy: the hub did not download some of its files/);
    expect(lines[1]).toContain('last revision it read');
    expect(resolvedJson(resolved)).toMatchObject({ hubWarnings: ['files-left-out', 'link-stale'] });
    expect(hubWarningLines(skill({}))).toEqual([]);
    expect(resolvedJson(skill({}))).not.toHaveProperty('hubWarnings');
  });
});
