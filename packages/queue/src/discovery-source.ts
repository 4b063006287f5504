import { type DiscoverySource, RepositoryName } from './queues.js';

/** An argument that names no repository or discovery source; the message says which and why. */
export class DiscoverySourceError extends Error {
  override name = 'DiscoverySourceError';
}

/** Turns `gh:o/r`, `o/r` or a GitHub URL into `o/r`; throws a DiscoverySourceError otherwise. */
export function parseRepositoryArg(text: string): string {
  const trimmed = text
    .trim()
    .replace(/^gh:/i, '')
    .replace(/^https?:\/\/(www\.)?github\.com\//i, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  const parsed = RepositoryName.safeParse(trimmed);
  if (!parsed.success) {
    throw new DiscoverySourceError(`Not a GitHub repository: "${text}" (expected gh:owner/repo).`);
  }
  return parsed.data;
}

/** `code-search` or `org:NAME` (the `--discover` option and the API's `discover` field) as a source. */
export function parseDiscoverArg(text: string): DiscoverySource {
  if (text === 'code-search') return { kind: 'code-search' };
  const org = /^org:([A-Za-z0-9][A-Za-z0-9-]{0,38})$/.exec(text);
  if (org) return { kind: 'org', name: org[1]! };
  throw new DiscoverySourceError(`Unknown discovery source "${text}" (use code-search or org:NAME).`);
}

/** A repository list or a discovery argument as a source (exactly one of them must be given). */
export function discoverySourceOf(input: { repos?: readonly string[]; discover?: string }): DiscoverySource {
  if ((input.repos === undefined) === (input.discover === undefined)) {
    throw new DiscoverySourceError('Give either a repository list or a discovery source.');
  }
  if (input.repos !== undefined) return { kind: 'repos', repos: input.repos.map(parseRepositoryArg) };
  return parseDiscoverArg(input.discover!);
}
