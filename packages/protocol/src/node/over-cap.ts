import type { Identity } from '../identity.js';
import { MENU_CAP } from '../leaf-rule.js';
import { ResolveError } from './resolve-error.js';

/** One sub-collection offered instead of an over-cap reference. */
export interface OfferedSubcollection {
  identity: string;
  count: number;
}

/**
 * The refusal of a menu over K (SPEC 1.2): the total and the sub-collections that fit, each a reference.
 * `subcollections` paths are relative to the identity's source root (repository, collection, or .atskills).
 */
export function overCapError(
  id: Identity,
  count: number,
  subcollections: { path: string; skills: number }[],
): ResolveError {
  const offered: OfferedSubcollection[] = subcollections.map((s) => ({
    identity: `${id.identity}/${s.path}`,
    count: s.skills,
  }));
  return overCapFromOffer(id.identity, count, offered);
}

/** The refusal built from sub-collections that already carry their identities. */
export function overCapFromOffer(
  identity: string,
  count: number,
  offered: OfferedSubcollection[],
): ResolveError {
  const list = offered.map((s) => `\n  @skills:${s.identity} (${s.count} skills)`).join('');
  return new ResolveError(
    'over-cap',
    `${identity} holds ${count} skills, more than a menu may list (${MENU_CAP}); reference a smaller part instead:${list}`,
    { count, subcollections: offered },
  );
}
