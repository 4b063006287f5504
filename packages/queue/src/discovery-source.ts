import { IdentityError, isValidGithubOwner, parseGithubRepository } from '@atskills/protocol';
import type { DiscoverySource } from './queues.js';

/** An argument that names no repository or discovery source; the message says which and why. */
export class DiscoverySourceError extends Error {
  override name = 'DiscoverySourceError';
}

/** Turns `gh:o/r`, `o/r` or a GitHub URL into `o/r`; throws a DiscoverySourceError otherwise. */
export function parseRepositoryArg(text: string): string {
  try {
    const { owner, repo } = parseGithubRepository(text);
    return `${owner}/${repo}`;
  } catch (error) {
    if (!(error instanceof IdentityError)) throw error;
    throw new DiscoverySourceError(
      `Not a GitHub repository: "${text}" (expected gh:owner/repo): ${error.message}`,
    );
  }
}

/** `code-search` or `org:NAME` (the `--discover` option and the API's `discover` field) as a source. */
export function parseDiscoverArg(text: string): DiscoverySource {
  if (text === 'code-search') return { kind: 'code-search' };
  if (text.startsWith('org:') && isValidGithubOwner(text.slice('org:'.length))) {
    return { kind: 'org', name: text.slice('org:'.length) };
  }
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
