import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DiscoverySourceError,
  discoverySourceOf,
  parseDiscoverArg,
  parseRepositoryArg,
} from './discovery-source.js';
import { InvalidJobError, jobIdProblem, jobIds, jobOptions, parseJobData } from './queues.js';

describe('parseJobData', () => {
  it('accepts what the producers write, with defaults applied', () => {
    expect(parseJobData('repository', { runId: 3, owner: 'o', repo: 'r' })).toEqual({
      runId: 3,
      owner: 'o',
      repo: 'r',
      force: false,
    });
    expect(parseJobData('discover', { runId: 1, source: { kind: 'code-search' } }).force).toBe(false);
    expect(parseJobData('schedule', {})).toEqual({});
  });

  it('refuses a payload injected into the queue, naming the queue and the field', () => {
    expect(() => parseJobData('repository', { runId: 'x', owner: 'o', repo: 'r' })).toThrow(InvalidJobError);
    expect(() => parseJobData('repository', { runId: 1, owner: '', repo: 'r' })).toThrow(
      /crawl-repository job: owner/,
    );
    expect(() => parseJobData('discover', { runId: 1, source: { kind: 'shell', cmd: 'rm -rf /' } })).toThrow(
      /crawl-discover job: source/,
    );
    expect(() => parseJobData('repository', { runId: 1, owner: 'o', repo: '..' })).toThrow(/repo/);
    expect(() => parseJobData('repository', { runId: 1, owner: '-o', repo: 'r' })).toThrow(/owner/);
    expect(() => parseJobData('schedule', { repos: ['o/r'] })).toThrow(InvalidJobError);
  });
});

describe('job ids and options', () => {
  it('one repository job per run, case-insensitively', () => {
    expect(jobIds.repository(7, 'Owner', 'Repo')).toBe(jobIds.repository(7, 'owner', 'repo'));
    expect(jobIds.repository(null, 'o', 'r')).toBe('repo-adhoc-o/r');
    expect(jobIds.discover(7)).toBe('discover-7');
  });

  it('every id is one BullMQ takes (no ":", not an integer)', () => {
    const ids = [
      jobIds.discover(7),
      jobIds.repository(7, 'o-x', 'r.y'),
      jobIds.repository(null, 'o', 'r'),
      jobIds.link(12, Date.now(), randomUUID()),
    ];
    for (const id of ids) expect(jobIdProblem(id), id).toBeNull();
    expect(jobIdProblem('link:1:2:3')).toMatch(/":"/);
    expect(jobIdProblem('42')).toMatch(/integer/);
  });

  it('discovery is retried at most three times', () => {
    const settings = { crawlAttempts: 5, crawlBackoffMs: 100 };
    expect(jobOptions('repository', settings).attempts).toBe(5);
    expect(jobOptions('discover', settings).attempts).toBe(3);
    expect(jobOptions('repository', settings).backoff).toEqual({ type: 'exponential', delay: 100 });
  });
});

describe('discovery sources', () => {
  it('reads repositories as gh: identities, owner/repo or GitHub URLs', () => {
    expect(parseRepositoryArg('gh:obra/superpowers')).toBe('obra/superpowers');
    expect(parseRepositoryArg(' https://github.com/obra/superpowers.git ')).toBe('obra/superpowers');
    expect(parseRepositoryArg('obra/superpowers/')).toBe('obra/superpowers');
    expect(() => parseRepositoryArg('not a repo')).toThrow(DiscoverySourceError);
    expect(() => parseRepositoryArg('o/..')).toThrow(DiscoverySourceError);
    expect(() => parseRepositoryArg('o/r/x')).toThrow(DiscoverySourceError);
  });

  it('reads code-search and org:NAME', () => {
    expect(parseDiscoverArg('code-search')).toEqual({ kind: 'code-search' });
    expect(parseDiscoverArg('org:anthropics')).toEqual({ kind: 'org', name: 'anthropics' });
    expect(() => parseDiscoverArg('org:')).toThrow(/Unknown discovery source/);
  });

  it('takes exactly one of a repository list and a discovery source', () => {
    expect(discoverySourceOf({ repos: ['gh:o/r'] })).toEqual({ kind: 'repos', repos: ['o/r'] });
    expect(discoverySourceOf({ discover: 'code-search' })).toEqual({ kind: 'code-search' });
    expect(() => discoverySourceOf({})).toThrow(DiscoverySourceError);
    expect(() => discoverySourceOf({ repos: [], discover: 'code-search' })).toThrow(DiscoverySourceError);
  });
});
