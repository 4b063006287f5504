import type { SkillLocation } from '@atskills/db';
import {
  formatIdentity,
  ghParts,
  hubParts,
  type Identity,
  IdentityError,
  parseIdentity,
} from '@atskills/protocol';
import { problem } from '../problems.js';
import { remembered } from '../runtime/remembered.js';

/** A cloud identity the hub serves, with where its rows live. */
export interface LocatedIdentity {
  identity: Identity;
  location: SkillLocation;
}

/**
 * Parses an identity from a URL or a request body (percent-encoded or not) and says where it lives.
 * Bad identities are 400 `bad-identity` with the core's error code as `reason`; bare (project) paths
 * are refused too, because they never leave the project.
 */
export function locateIdentity(text: string): LocatedIdentity {
  let identity: Identity;
  try {
    identity = parseIdentity(text);
  } catch (err) {
    if (err instanceof IdentityError) {
      // The core's advice offers a bare path too, which names a project's own skill: not the hub's to serve.
      const message =
        err.code === 'unknown-prefix'
          ? `Unknown identity prefix "${String(err.details?.prefix)}:"; the hub serves gh: and hub: identities (write a colon inside a path as %3A).`
          : err.message;
      throw problem('bad-identity', message, { reason: err.code });
    }
    throw err;
  }
  if (identity.source === 'gh') {
    const { owner, repo, subpath } = ghParts(identity);
    return { identity, location: { source: 'gh', owner, container: repo, path: subpath } };
  }
  if (identity.source === 'hub') {
    const { namespace, collection, subpath } = hubParts(identity);
    return { identity, location: { source: 'hub', owner: namespace, container: collection, path: subpath } };
  }
  throw problem('bad-identity', 'A bare path is a project skill; the hub serves gh: and hub: identities', {
    reason: 'unknown-prefix',
  });
}

/** The canonical identity of a folder of a location. */
export function identityOf(loc: SkillLocation, path = loc.path): string {
  return formatIdentity(loc.source, [loc.owner, loc.container, ...(path ? [path] : [])].join('/'));
}

/** Identities canonicalised lately: parsing is most of a batch revalidation's CPU, and clients repeat theirs. */
const CANONICAL_MEMO_MAX = 20_000;

/** The canonical identity of request text, or undefined when it does not parse (the full path answers why). */
export const canonicalIdentity: (text: string) => string | undefined = remembered((text) => {
  try {
    return locateIdentity(text).identity.identity;
  } catch {
    return undefined;
  }
}, CANONICAL_MEMO_MAX);
