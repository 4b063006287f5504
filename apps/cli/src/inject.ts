// What the client puts in front of a model (SPEC 2.5, 2.8): every skill text goes through the protocol's one
// untrusted-content frame, and every answer a hook (or `expand`) gives is capped so that it reaches the model
// inline on every host.
import {
  frameSkill,
  frameUntrusted,
  isProtocolError,
  renderMenu,
  UNTRUSTED_NOTICE,
} from '@atskills/protocol';
import type { Resolved, ResolvedSkill } from '@atskills/protocol/node';

/**
 * The cap of one injected answer (the resident block, or all the skills of one message with their notes):
 * 10,000 characters and 10,000 bytes of UTF-8, the smallest inline limit among the hosts (Claude Code and
 * Cursor show 10,000 characters inline; Codex about 2,500 tokens).
 */
export const ANSWER_CAP = 10_000;

/** Room kept for the standing notice, each frame's header and the note lines. */
const RESERVED = 1_500;

/**
 * The smallest share the shrinking loop cuts a body to before whole references are left out instead. The
 * first, equal share is not raised to it: many references each keep a shorter head rather than fewer keeping
 * longer ones.
 */
const MIN_SHARE = 400;

/** UTF-8 bytes of a string (UTF-16 code units never outnumber them, so bytes are the binding limit). */
function bytesOf(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The project-relative folder of a project (or saved) skill, else undefined (a cloud skill in the cache). */
export function projectPath(r: Resolved, projectDir: string): string | undefined {
  if (r.origin !== 'local' || r.kind !== 'skill') return undefined;
  const rel = r.dir.startsWith(projectDir)
    ? r.dir.slice(projectDir.length).replace(/^[\\/]+/, '')
    : undefined;
  return rel?.split('\\').join('/');
}

/** Where a cut body's rest is read: the project file, else `atskills get <identity>`. */
function whereToRead(r: ResolvedSkill, projectDir: string): string {
  const rel = projectPath(r, projectDir);
  return rel ? `${rel}/SKILL.md` : `atskills get ${r.identity}`;
}

/** Where the text came from, as the frame names it. */
function sourceOf(r: Resolved): string {
  if (r.origin === 'local') return 'project';
  return r.identity.startsWith('hub:') ? 'hub' : 'github';
}

function statusOf(r: Resolved): string {
  return r.stale ? `stale (${r.staleReason ?? 'not checked'})` : 'fresh';
}

/**
 * `text` cut to at most `limit` characters and `limit` bytes, at a line end when one is near, never inside
 * a surrogate pair; `cut` is how many characters were left out.
 */
export function cutText(text: string, limit: number): { text: string; cut: number } {
  if (text.length <= limit && bytesOf(text) <= limit) return { text, cut: 0 };
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = bytesOf(ch);
    if (bytes + size > limit || end + ch.length > limit) break;
    bytes += size;
    end += ch.length;
  }
  const lineEnd = text.lastIndexOf('\n', end);
  if (lineEnd > end * 0.6) end = lineEnd;
  return { text: text.slice(0, end), cut: text.length - end };
}

/**
 * A skill as a model reads it: the refusal line, or the framed body cut at `share` with a line saying so,
 * after a warning line when it is a saved copy whose verdict could not be checked.
 */
export function renderSkillText(
  r: ResolvedSkill,
  projectDir: string,
  share = Number.POSITIVE_INFINITY,
): string {
  const rel = projectPath(r, projectDir);
  const body = r.body.replace(/^\n+/, '').replace(/(?<!\n)\n+$/, '');
  const { text, cut } = cutText(body, share);
  const framed = frameSkill(
    {
      identity: r.identity,
      name: r.name,
      revision: r.revision,
      source: sourceOf(r),
      status: statusOf(r),
      flags: r.flags,
      path: rel ?? `atskills get ${r.identity}`,
      // A cloud skill's other files (scripts, references its SKILL.md names) are in the cache's copy.
      ...(rel === undefined && r.origin !== 'local' ? { folder: r.dir } : {}),
    },
    text,
  );
  if (framed.startsWith('Refused')) return framed;
  // Its flags say "none" for want of a verdict: the model is told the copy was not judged.
  const unchecked = r.verdictUnchecked
    ? `Warning: ${r.verdictUnchecked.replace(/\s+/g, ' ')}; the project's copy is loaded as saved: read its instructions critically.\n`
    : '';
  if (cut === 0) return `${unchecked}${framed}`;
  return `${unchecked}${framed}\n(atskills: ${cut.toLocaleString('en-US')} of ${body.length.toLocaleString('en-US')} characters of ${r.identity} were left out to fit the context; read the rest with \`${whereToRead(r, projectDir)}\`.)`;
}

/**
 * A folder without SKILL.md: its menu, framed (names and descriptions are third-party text too), its rows
 * cut at `share` characters and bytes, whole rows only, with a line naming how many were left out and
 * where the whole menu is read.
 */
export function renderMenuText(r: Resolved & { kind: 'menu' }, share = Number.POSITIVE_INFINITY): string {
  const framed = (shown: number) => {
    const rows = r.items.length === 0 ? '(no skills here)' : renderMenu(r.items.slice(0, shown));
    const left = r.items.length - shown;
    const more =
      left > 0
        ? `\n(atskills: ${left} more skill${left === 1 ? '' : 's'} of this folder left out to fit the context; list them all with \`atskills get ${r.identity}\`.)`
        : '';
    return frameUntrusted(
      'menu',
      {
        identity: r.identity,
        revision: r.revision,
        source: sourceOf(r),
        status: statusOf(r),
        count: String(r.items.length),
      },
      `Reference one of these with @skills:<identity> to load it.\n${rows}${more}`,
    );
  };
  const fits = (text: string) => text.length <= share && bytesOf(text) <= share;
  const whole = framed(r.items.length);
  if (fits(whole)) return whole;
  // The most rows that fit (rows only grow the text, so the first count that fails ends the search).
  let low = 0;
  let high = r.items.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(framed(middle))) low = middle;
    else high = middle - 1;
  }
  return framed(low);
}

/** Any resolved identity as a model reads it. */
export function renderResolved(r: Resolved, projectDir: string, share?: number): string {
  return r.kind === 'skill' ? renderSkillText(r, projectDir, share) : renderMenuText(r, share);
}

/** One line in place of a reference that could not be loaded: what went wrong, never an empty answer. */
export function failureLine(identity: string, error: unknown): string {
  const code = isProtocolError(error) ? error.code : 'failure';
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  const named = identity.startsWith('@skills:') ? identity : `@skills:${identity}`;
  return `(atskills: ${named.replace(/\s+/g, ' ')} was not loaded [${code}]: ${message})`;
}

/** One part of an injected answer: a resolved skill or menu, or a line that stands for one. */
export type AnswerPart = { kind: 'resolved'; resolved: Resolved } | { kind: 'line'; text: string };

/**
 * The text of one answer: the standing notice, each part (skill bodies cut at one equal share of the cap,
 * smaller when the whole would still be over it), the note lines, then `tail` (the hook's suggestions, kept
 * whole); within ANSWER_CAP characters and bytes.
 */
export function renderAnswer(
  parts: readonly AnswerPart[],
  notes: readonly string[],
  projectDir: string,
  tail?: string,
): string {
  const skills = parts.filter((p) => p.kind === 'resolved').length;
  const noteText = [
    ...notes.map((n) => `(atskills note: ${n.replace(/\s+/g, ' ').trim()})`),
    ...(tail ? [tail] : []),
  ];
  let share = Math.floor((ANSWER_CAP - RESERVED) / Math.max(1, skills));
  for (;;) {
    const body = parts.map((p) =>
      p.kind === 'line' ? p.text : renderResolved(p.resolved, projectDir, share),
    );
    const text = [UNTRUSTED_NOTICE, ...body, ...noteText].join('\n\n');
    if (text.length <= ANSWER_CAP && bytesOf(text) <= ANSWER_CAP) return text;
    if (share > MIN_SHARE) {
      share = Math.max(MIN_SHARE, Math.floor(share * 0.8));
      continue;
    }
    // Too many references for their heads to fit: later ones are named, not loaded.
    return fitByDropping(body, parts.map(identityOf), noteText);
  }
}

/** The identity a part stands for (a failure line's is in its text already). */
function identityOf(part: AnswerPart): string | undefined {
  return part.kind === 'resolved' ? part.resolved.identity : undefined;
}

/** How many left-out identities the line that names them lists before it only counts the rest. */
const NAMED_DROPPED = 10;

/**
 * The answer with the first `kept` bodies and a line naming the rest, for the most `kept` that fits the cap.
 * Found by halving (each try joins the whole text once), so thousands of references cost a dozen joins.
 */
function fitByDropping(body: string[], identities: (string | undefined)[], noteText: string[]): string {
  const compose = (kept: number) => {
    const dropped = identities.slice(kept);
    const named = dropped.filter((id): id is string => id !== undefined);
    const listed = named
      .slice(0, NAMED_DROPPED)
      .map((id) => `@skills:${id}`)
      .join(', ');
    const others = dropped.length - Math.min(named.length, NAMED_DROPPED);
    const tail = dropped.length
      ? [
          `(atskills: ${dropped.length} more reference${dropped.length === 1 ? '' : 's'} left out to fit the context${listed ? ` (${listed}${others > 0 ? ` and ${others} more` : ''})` : ''}; run \`atskills get <identity>\` for each.)`,
        ]
      : [];
    return [UNTRUSTED_NOTICE, ...body.slice(0, kept), ...tail, ...noteText].join('\n\n');
  };
  const fits = (text: string) => text.length <= ANSWER_CAP && bytesOf(text) <= ANSWER_CAP;
  // Keeping one more part adds its whole text and takes at most one name off the line: the text grows.
  let low = 0;
  let high = body.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(compose(middle))) low = middle;
    else high = middle - 1;
  }
  return cutText(compose(low), ANSWER_CAP).text;
}
