import { hubParts, parseIdentity, splitIdentityPrefix } from '@atskills/protocol';
import { ResolveError } from '@atskills/protocol/node';
import type { LinkAnswer, LinkCredential, LinkHub, NewLink } from './link-hub.js';

/** A whole hub collection named on the command line. */
export interface CollectionTarget {
  team: string;
  collection: string;
  identity: string;
}

/** `hub:<team>/<collection>` from the command line, or a usage error. */
export function collectionOf(text: string): CollectionTarget {
  const target = parseIdentity(text);
  const parts = target.source === 'hub' ? hubParts(target) : undefined;
  if (parts?.subpath !== '') {
    throw new ResolveError(
      'usage',
      `Name a whole hub collection, like hub:acme/playbooks (got ${target.identity}).`,
    );
  }
  return { team: parts.namespace, collection: parts.collection, identity: target.identity };
}

/** The team `link list` names: `hub:<team>` or just its name. */
export function teamOf(text: string): string {
  const { source, rest } = splitIdentityPrefix(text);
  return source === 'hub' ? rest : text;
}

/** The credential options of `link add`. */
export interface CredentialOptions {
  app?: boolean;
  tokenEnv?: string;
  tokenStdin?: boolean;
  /** The token's expiry (a date), shown to the team's owners. */
  expires?: string;
}

/** Where a token may come from: never an argument (shell history, `ps`). */
export interface TokenSources {
  env: NodeJS.ProcessEnv;
  stdin?: AsyncIterable<Buffer | string>;
}

/** The one credential the options name (a usage error for none or several), reading a token if it is one. */
export async function linkCredential(opts: CredentialOptions, from: TokenSources): Promise<LinkCredential> {
  const kinds = [opts.app, opts.tokenEnv !== undefined, opts.tokenStdin].filter(Boolean).length;
  if (kinds !== 1) {
    throw new ResolveError(
      'usage',
      'Give exactly one credential: --app, --token-env <variable> or --token-stdin.',
    );
  }
  if (opts.app) return { kind: 'app' };
  return {
    kind: 'token',
    token: await readToken(opts, from),
    ...(opts.expires ? { expiresAt: new Date(opts.expires).toISOString() } : {}),
  };
}

/** The token from the named environment variable, else all of standard input, trimmed; never empty. */
async function readToken(opts: CredentialOptions, from: TokenSources): Promise<string> {
  if (opts.tokenEnv) {
    const value = from.env[opts.tokenEnv]?.trim();
    if (!value) throw new ResolveError('usage', `The environment variable ${opts.tokenEnv} is empty.`);
    return value;
  }
  let text = '';
  for await (const chunk of from.stdin ?? []) text += chunk.toString();
  if (!text.trim()) throw new ResolveError('usage', 'No token on standard input.');
  return text.trim();
}

/** The options of `link add` that shape the link. */
export interface AddOptions extends CredentialOptions {
  /** The `hub:<team>/<collection>` to link to. */
  to: string;
  folder?: string;
  public?: boolean;
}

/**
 * Validates `link add`'s options (collection, exactly one credential), reads the token if one is named and
 * asks the hub to create the link: the target and the link as the hub created it (its first index queued).
 */
export async function addLink(
  hub: LinkHub,
  repo: string,
  opts: AddOptions,
  from: TokenSources,
): Promise<{ target: CollectionTarget; created: LinkAnswer }> {
  const target = collectionOf(opts.to);
  const link: NewLink = {
    repo,
    collection: target.collection,
    ...(opts.folder ? { folder: opts.folder } : {}),
    visibility: opts.public ? 'public' : 'private',
    credential: await linkCredential(opts, from),
  };
  return { target, created: await hub.create(target.team, link) };
}

/** How `waitForIndex` passes time; tests shorten it. */
export interface WaitClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Between two status reads. */
  pollMs: number;
}

const REAL_CLOCK: WaitClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  pollMs: 500,
};

/** Reads the link's status until its index has run (not queued or indexing) or `seconds` are over. */
export async function waitForIndex(
  hub: LinkHub,
  target: CollectionTarget,
  seconds: number,
  clock: WaitClock = REAL_CLOCK,
): Promise<LinkAnswer> {
  const deadline = clock.now() + seconds * 1000;
  for (;;) {
    const answer = await hub.status(target.team, target.collection);
    if (!['queued', 'indexing'].includes(answer.status) || clock.now() > deadline) return answer;
    await clock.sleep(clock.pollMs);
  }
}

/** A link's lines for people, and the exit code it stands for (1 when its index failed). */
export function linkReport(link: LinkAnswer): { lines: string[]; exitCode: 0 | 1 } {
  return { lines: describeLink(link), exitCode: link.status === 'failed' ? 1 : 0 };
}

/** A link for people: where it reads from and with what, its status, its failure and problems. */
export function describeLink(link: LinkAnswer): string[] {
  const credential =
    link.credential.kind === 'app'
      ? 'the GitHub App'
      : // Members who are not owners are not shown the token's last characters (the hub sends them empty).
        `${link.credential.last4 ? `a token ending in ${link.credential.last4}` : 'a token'}${link.credential.expiresAt ? `, expires ${link.credential.expiresAt.slice(0, 10)}` : ''}`;
  const lines = [
    `${link.identity} <- ${link.repository}${link.folder ? `/${link.folder}` : ''} (${link.visibility}, ${credential})`,
    `  status: ${link.status}${link.stale ? ' (members read the last good revision, marked stale)' : ''}${link.headCommit ? ` at ${link.headCommit.slice(0, 12)}` : ''}`,
  ];
  if (link.failure) lines.push(`  failure: ${link.failure.code}: ${link.failure.message}`);
  for (const p of link.problems) lines.push(`  problem: ${p.path}: ${p.code}: ${p.message}`);
  return lines;
}
