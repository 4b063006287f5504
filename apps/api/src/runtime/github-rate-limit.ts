import { trimTrailingSlashes } from '@atskills/protocol';
/**
 * The GitHub rate-limit gauge when crawls run in other processes (BullMQ workers): GitHub's
 * `GET /rate_limit` answers what is left for the token every worker shares, and does not itself count
 * against the limit. In embedded mode the in-process crawler reports each answer's headers instead.
 */
import { z } from 'zod';

const RateLimitAnswer = z.object({
  resources: z.record(z.string(), z.object({ remaining: z.number() })),
});

/** How often the API asks GitHub. */
export const GITHUB_RATE_LIMIT_POLL_MS = 60_000;

export interface GithubRateLimitPoll {
  /** Asks GitHub now and reports every resource's remaining count. */
  poll(): Promise<void>;
  close(): void;
}

/** Polls `${apiUrl}/rate_limit` with the crawler's token and reports `remaining` per resource. */
export function startGithubRateLimitPoll(options: {
  apiUrl: string;
  token: string;
  report: (remaining: number, resource: string) => void;
  everyMs?: number;
  logger?: { warn(obj: object, msg: string): void };
}): GithubRateLimitPoll {
  const poll = async () => {
    const response = await fetch(`${trimTrailingSlashes(options.apiUrl)}/rate_limit`, {
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${options.token}`,
        'user-agent': 'atskills-hub',
      },
      signal: AbortSignal.timeout(5_000),
    });
    if (!response.ok) throw new Error(`GET /rate_limit answered ${response.status}`);
    const { resources } = RateLimitAnswer.parse(await response.json());
    for (const [resource, { remaining }] of Object.entries(resources)) options.report(remaining, resource);
  };
  const timer = setInterval(() => {
    poll().catch((err: Error) =>
      options.logger?.warn({ err: { message: err.message } }, 'github rate limit unknown'),
    );
  }, options.everyMs ?? GITHUB_RATE_LIMIT_POLL_MS);
  timer.unref();
  return { poll, close: () => clearInterval(timer) };
}
