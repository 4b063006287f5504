import { createHash } from 'node:crypto';
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

/**
 * The revision a menu is answered and validated with: its content revision while no row is flagged, else one
 * that also covers the rows' verdicts. A verdict changes the rows a client holds (a refused row loses its own
 * text), so a client revalidating a menu cached before the verdict must not get 304 with the old rows.
 */
export function menuRevisionWithVerdicts(revision: string, rows: readonly MenuRow[]): string {
  const verdicts = rows
    .filter((row) => row.flags?.length)
    .map((row) => `${row.identity} ${row.flags!.join(',')}`);
  if (verdicts.length === 0) return revision;
  return createHash('sha256')
    .update([revision, ...verdicts.sort()].join('\n'), 'utf8')
    .digest('hex');
}
