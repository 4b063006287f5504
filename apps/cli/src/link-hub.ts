import type { ClientSettings } from '@atskills/protocol/node';
import { ResolveError } from '@atskills/protocol/node';
import { z } from 'zod';
import { hubRequest } from './hub-client.js';

/** A link as the hub shows it (the token never: its last four characters and expiry). */
export const LinkAnswer = z.object({
  identity: z.string(),
  repository: z.string(),
  folder: z.string(),
  visibility: z.string(),
  credential: z.object({
    kind: z.enum(['app', 'token']),
    last4: z.string().optional(),
    expiresAt: z.string().nullable().optional(),
  }),
  status: z.string(),
  stale: z.boolean(),
  failure: z.object({ code: z.string(), message: z.string() }).nullable(),
  headCommit: z.string().nullable(),
  problems: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })),
});
export type LinkAnswer = z.infer<typeof LinkAnswer>;

/** How a link reads its repository: the hub's GitHub App, or a fine-grained token. */
export type LinkCredential = { kind: 'app' } | { kind: 'token'; token: string; expiresAt?: string };

/** The body of `POST /v1/teams/<team>/links`. */
export interface NewLink {
  repo: string;
  collection: string;
  folder?: string;
  visibility: 'public' | 'private';
  credential: LinkCredential;
}

/**
 * The hub's link routes, as the link flows use them. `httpLinkHub` is the one the command uses; tests fill
 * it with links held in memory.
 */
export interface LinkHub {
  create(team: string, link: NewLink): Promise<LinkAnswer>;
  list(team: string): Promise<LinkAnswer[]>;
  status(team: string, collection: string): Promise<LinkAnswer>;
  /** Asks for an index now (the answer comes through `status`). */
  reindex(team: string, collection: string): Promise<void>;
  remove(team: string, collection: string): Promise<void>;
}

const LinkList = z.object({ links: z.array(LinkAnswer) });

/**
 * The link routes over HTTP with the run's settings (read on the first call, so a usage error is raised
 * before them). Every call needs a token: without one it fails with `no-access` before any request.
 */
export function httpLinkHub(settings: () => Promise<Readonly<ClientSettings>>): LinkHub {
  const call = async (method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown) => {
    const current = await settings();
    if (!current.hubToken) {
      throw new ResolveError(
        'no-access',
        'Linking needs a token: run `atskills login --hub <url>` (or set ATSKILLS_TOKEN).',
      );
    }
    return hubRequest(current, method, route, {
      ...(body === undefined
        ? {}
        : { body: Buffer.from(JSON.stringify(body)), contentType: 'application/json' }),
    });
  };
  const route = (team: string, collection?: string) =>
    `/v1/teams/${encodeURIComponent(team)}/links${collection ? `/${encodeURIComponent(collection)}` : ''}`;
  return {
    create: async (team, link) => LinkAnswer.parse(await call('POST', route(team), link)),
    list: async (team) => LinkList.parse(await call('GET', route(team))).links,
    status: async (team, collection) => LinkAnswer.parse(await call('GET', route(team, collection))),
    reindex: async (team, collection) => {
      await call('POST', `${route(team, collection)}/index`);
    },
    remove: async (team, collection) => {
      await call('DELETE', route(team, collection));
    },
  };
}
