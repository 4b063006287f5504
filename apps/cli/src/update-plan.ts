import { normalizeIdentity } from '@atskills/protocol';
import { ResolveError } from '@atskills/protocol/node';
import type { ProjectInventory } from './inventory.js';

/**
 * The saved skills `atskills update` saves again, in order: every one with a readable stamp when none is
 * named (or `all`), else the named ones, each of which must be saved in the project. Throws a `usage`
 * error for names and `all` together, `not-found` for a name the project does not hold.
 */
export function planUpdate(
  inventory: ProjectInventory,
  named: string[],
  options: { all?: boolean },
): string[] {
  if (options.all && named.length > 0)
    throw new ResolveError('usage', 'Name the saved skills to update, or pass --all (not both).');
  // No identity named means every saved skill, as the help says.
  const all = options.all === true || named.length === 0;
  if (all) return inventory.saved.filter((s) => !s.stampProblem).map((s) => s.identity);
  const targets = named.map((text) => normalizeIdentity(text));
  for (const target of targets)
    if (!inventory.saved.some((s) => s.identity === target && !s.stampProblem))
      throw new ResolveError(
        'not-found',
        `${target} is not saved in this project (atskills list shows what is; atskills save adds it).`,
      );
  return targets;
}
