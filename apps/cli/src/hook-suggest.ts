// Suggestions in the user-prompt hook (SPEC 2.7): the skills the hub finds for the message, named (identity
// and one-line description, never bodies) after the injected references, within a small budget of the
// model's context. Descriptions are third-party text, so they sit in the untrusted frame.
import {
  activeFlagCodes,
  flaggedNote,
  frameUntrusted,
  parseIdentity,
  refusingVerdict,
  type SuggestResult,
  UNLIKELY_SUGGESTION_BELOW,
  UNTRUSTED_NOTICE,
} from '@atskills/protocol';
import { oneLine, oneLineWithinBytes } from './format/printable.js';

/**
 * The most UTF-8 bytes the suggestions add to a hook answer (about 300 tokens). Bytes, not characters: the
 * models' tokenizers work on bytes, about four of English to a token, but a Japanese or Chinese character
 * (three bytes) is often a token of its own, so 1,200 characters of three Japanese descriptions made ~574
 * tokens; 1,200 bytes of them make ~290 (o200k), and of English ~260.
 */
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

/**
 * The longest description line of one suggestion, in UTF-8 bytes (as SUGGESTIONS_CAP): 200 characters of
 * English, about 66 of Japanese, so that `limit` rows fit the cap in either.
 */
const DESCRIPTION_MAX_BYTES = 200;

/** The longest name of one suggestion, in UTF-8 bytes. */
const NAME_MAX_BYTES = 64;

const INTRO =
  'Skills the @skills hub suggests for this message (not loaded; to use one, reference it with its @skills: identity, e.g. in a reply to the user, or run `atskills get <identity>`; ignore them if they do not fit):';

/** What the project already has or the message already names: never suggested again. */
export interface KnownSkills {
  /** Exact identities (saved under .atskills/, installed by an .autotrigger line). */
  identities: ReadonlySet<string>;
  /**
   * Identities the message references: they and everything under them are in the answer already (a folder
   * reference injects that folder's skills).
   */
  referenced: readonly string[];
  /** Identities of whole-folder .autotrigger lines: everything under them counts as installed… */
  folders: readonly string[];
  /** …except the identities a `!` line excludes from them (`!@hub:t/c/skill`), which are not installed. */
  excluded: ReadonlySet<string>;
}

function isUnder(identity: string, folder: string): boolean {
  return identity.startsWith(`${folder}/`);
}

function isKnown(identity: string, known: KnownSkills): boolean {
  if (known.identities.has(identity)) return true;
  if (known.referenced.some((r) => r === identity || isUnder(identity, r))) return true;
  return !known.excluded.has(identity) && known.folders.some((f) => isUnder(identity, f));
}

/**
 * The canonical text of a suggested identity (the hub's text is read like any reference: `hub:` folded to
 * lower case, a GitHub URL to `gh:`), or undefined when it is no cloud identity: one that does not parse, or
 * a bare path, which a reference would read as the project's own folder.
 */
function canonicalIdentity(text: string): string | undefined {
  try {
    const identity = parseIdentity(text);
    return identity.source === 'local' ? undefined : identity.identity;
  } catch {
    return undefined;
  }
}

/**
 * The framed suggestions to append, or undefined when none is left: identities that do not parse, repeats,
 * known skills, skills the hub judged malicious and suggestions scored under HOOK_SCORE_FLOOR are dropped, at
 * most `limit` are kept, control characters are taken out of the hub's text, and the whole text stays within
 * SUGGESTIONS_CAP bytes.
 */
export function renderSuggestions(
  results: readonly SuggestResult[],
  known: KnownSkills,
  limit: number,
): string | undefined {
  const rows: string[] = [];
  const seen = new Set<string>();
  const compose = (lines: string[]) =>
    `${INTRO}\n${frameUntrusted('suggestions', { source: 'hub', count: String(lines.length) }, lines.join('\n'))}`;
  for (const r of results) {
    if (rows.length >= limit) break;
    const identity = canonicalIdentity(r.identity);
    if (identity === undefined || seen.has(identity)) continue;
    seen.add(identity);
    const codes = activeFlagCodes(r.flags)
      .map((code) => oneLine(code))
      .filter((code) => code !== '');
    if (r.score < HOOK_SCORE_FLOOR || isKnown(identity, known) || refusingVerdict(codes)) continue;
    const name = oneLineWithinBytes(r.name, NAME_MAX_BYTES);
    const description = oneLineWithinBytes(r.description, DESCRIPTION_MAX_BYTES);
    const row = `@skills:${identity} (${name}): ${description}${flaggedNote(codes, ' ')}`;
    if (Buffer.byteLength(compose([...rows, row]), 'utf8') > SUGGESTIONS_CAP) continue;
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
  const referenced = scanReferences(message).flatMap((r) => (r.ok ? [r.ref.identity] : []));
  const identities = new Set<string>();
  const folders: string[] = [];
  let excluded = new Set<string>();
  try {
    const inventory = await readInventory(projectDir);
    for (const s of inventory.saved) identities.add(s.identity);
    for (const c of inventory.installedCloud) {
      identities.add(c.identity);
      if (c.directory) folders.push(c.identity);
    }
    excluded = new Set(inventory.excluded);
  } catch {
    // A project whose .atskills/ cannot be read still gets suggestions; only the message's are left out.
  }
  return { identities, referenced, folders, excluded };
}

/** A hook answer holding only suggestions: the standing notice first, as before any framed text. */
export function alone(suggestions: string): string {
  return `${UNTRUSTED_NOTICE}\n\n${suggestions}`;
}
