// Suggestions in the user-prompt hook (SPEC 2.7): the skills the hub finds for the message, named (identity
// and one-line description, never bodies) after the injected references, within a small budget of the
// model's context. Descriptions are third-party text, so they sit in the untrusted frame.
import {
  activeFlagCodes,
  flaggedNote,
  frameUntrusted,
  refusingVerdict,
  type SuggestResult,
  UNLIKELY_SUGGESTION_BELOW,
  UNTRUSTED_NOTICE,
} from '@atskills/protocol';

/** The most characters the suggestions add to a hook answer (about 300 tokens). */
export const SUGGESTIONS_CAP = 1_200;

/**
 * The least score a suggestion needs to be appended: the score estimates the chance the skill helps, and
 * below one in ten a line in every prompt costs more than it finds. On the judged messages (`npm run bench
 * -- suggest`, "the hook at a score floor") it takes the lines appended a message from 2.61 to 2.08 and their
 * judged share from 0.44 to 0.53, while the answerable messages with a judged skill appended go from 0.920 to
 * 0.905; on the short requests 2.82 to 1.90 lines, 0.30 to 0.42 judged, 0.737 kept. The protocol's
 * UNLIKELY_SUGGESTION_BELOW, under which `atskills suggest` and the web page list suggestions apart.
 */
export const HOOK_SCORE_FLOOR = UNLIKELY_SUGGESTION_BELOW;

/** The longest description line of one suggestion. */
const DESCRIPTION_MAX = 200;

const INTRO =
  'Skills the @skills hub suggests for this message (not loaded; to use one, reference it with its @skills: identity, e.g. in a reply to the user, or run `atskills get <identity>`; ignore them if they do not fit):';

/** What the project already has or the message already names: never suggested again. */
export interface KnownSkills {
  /** Exact identities (referenced in the message, saved under .atskills/, installed by an .autotrigger line). */
  identities: ReadonlySet<string>;
  /** Identities of whole-folder .autotrigger lines: everything under them counts as installed. */
  folders: readonly string[];
}

function isKnown(identity: string, known: KnownSkills): boolean {
  return known.identities.has(identity) || known.folders.some((f) => identity.startsWith(`${f}/`));
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/**
 * The framed suggestions to append, or undefined when none is left: known skills, skills the hub judged
 * malicious and suggestions scored under HOOK_SCORE_FLOOR are dropped, at most `limit` are kept, and the
 * whole text stays within SUGGESTIONS_CAP.
 */
export function renderSuggestions(
  results: readonly SuggestResult[],
  known: KnownSkills,
  limit: number,
): string | undefined {
  const rows: string[] = [];
  const compose = (lines: string[]) =>
    `${INTRO}\n${frameUntrusted('suggestions', { source: 'hub', count: String(lines.length) }, lines.join('\n'))}`;
  for (const r of results) {
    if (rows.length >= limit) break;
    const codes = activeFlagCodes(r.flags);
    if (r.score < HOOK_SCORE_FLOOR || isKnown(r.identity, known) || refusingVerdict(codes)) continue;
    const row = `@skills:${r.identity} (${oneLine(r.name, 64)}): ${oneLine(r.description, DESCRIPTION_MAX)}${flaggedNote(codes, ' ')}`;
    if (compose([...rows, row]).length > SUGGESTIONS_CAP) continue;
    rows.push(row);
  }
  return rows.length === 0 ? undefined : compose(rows);
}

/** The skills the message references and the project has saved or installed. */
export async function knownSkills(message: string, projectDir: string): Promise<KnownSkills> {
  const [{ scanReferences }, { readInventory }] = await Promise.all([
    import('@atskills/protocol'),
    import('./inventory.js'),
  ]);
  const identities = new Set<string>();
  for (const r of scanReferences(message)) if (r.ok) identities.add(r.ref.identity);
  const folders: string[] = [];
  try {
    const inventory = await readInventory(projectDir);
    for (const s of inventory.saved) identities.add(s.identity);
    for (const c of inventory.installedCloud) {
      identities.add(c.identity);
      if (c.directory) folders.push(c.identity);
    }
  } catch {
    // A project whose .atskills/ cannot be read still gets suggestions; only the message's are left out.
  }
  return { identities, folders };
}

/** A hook answer holding only suggestions: the standing notice first, as before any framed text. */
export function alone(suggestions: string): string {
  return `${UNTRUSTED_NOTICE}\n\n${suggestions}`;
}
