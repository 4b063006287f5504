import { GitError } from '@atskills/protocol/node';
import { probeHead, type RemoteHead } from '../git/remote-snapshot.js';
import { RateLimitedError } from '../github/rate-limited-error.js';
import type { GitRemote } from './pipeline-run.js';

/**
 * The probe phase: the remote's head in one ls-refs request, nothing downloaded. A git server's rate limit
 * delays the job (RateLimitedError) instead of failing it.
 */
export async function probe(remote: GitRemote): Promise<RemoteHead> {
  try {
    return await probeHead(remote.url, { token: remote.token, signal: remote.signal });
  } catch (error) {
    if (error instanceof GitError && error.kind === 'rate-limited') {
      throw new RateLimitedError(60_000, `git server rate limit: ${error.message}`);
    }
    throw error;
  }
}
