import { type Database, findLiveSkillSummaries, type ReadScope } from '@atskills/db';
import { refusalLine, refusingVerdict, renderMenu } from '@atskills/protocol';
import { flagRules } from './flags.js';

/**
 * A menu row as the hub answers it (REST, MCP, the compatibility routes, the web page): a flagged skill's
 * row names its flags; a skill judged malicious keeps its identity (so the refusal can name it) and nothing
 * of its own text: no name, and a refusal line for its description, as search_skills answers it (SPEC 2.8).
 */
export interface MenuRow {
  identity: string;
  name: string;
  description: string;
  /** The flags that still hold (accepted disputes left out); absent when there are none. */
  flags?: string[];
  /** Present on a skill the hub judged malicious. */
  refused?: true;
}

/** `items` with the verdicts of their skills applied, read with the viewer's scope in one query. */
export async function withMenuVerdicts(
  db: Database,
  viewer: ReadScope,
  items: readonly { identity: string; name: string; description: string }[],
): Promise<MenuRow[]> {
  if (items.length === 0) return [];
  const rows = await findLiveSkillSummaries(
    db,
    viewer,
    items.map((i) => i.identity),
  );
  const flagsOf = new Map(rows.map((row) => [row.identity, flagRules(row.flags)]));
  return items.map((item) => menuRowOf(item, flagsOf.get(item.identity) ?? []));
}

/** One row with its skill's flags applied: named, or refused with no text of the skill's own. */
export function menuRowOf(
  item: { identity: string; name: string; description: string },
  flags: string[],
): MenuRow {
  const verdict = refusingVerdict(flags);
  if (verdict)
    return {
      identity: item.identity,
      name: '',
      description: refusalLine(item.identity, verdict),
      flags,
      refused: true,
    };
  return {
    identity: item.identity,
    name: item.name,
    description: item.description,
    ...(flags.length ? { flags } : {}),
  };
}

/**
 * A menu as text: the protocol's rows (`- <identity>: <description>`, each identity in reference form, a
 * flagged row ending in `[flagged: …]`, a refused row its refusal line), as the client renders them.
 */
export function menuText(items: readonly MenuRow[]): string {
  return renderMenu(items);
}
