// The resident block as the session-start hooks inject it (SPEC 1.5, 2.5, 2.8): the standing notice, the
// rows in the untrusted frame (names and descriptions are third-party text), and one note line, within the
// answer cap.
import { frameUntrusted, UNTRUSTED_NOTICE } from '@atskills/protocol';
import type { ResidentReport } from '@atskills/protocol/node';
import { ANSWER_CAP, cutText } from './inject.js';

const INTRO =
  'Skills resident in this project (@skills protocol). When one applies, load its instructions with `atskills get <identity>`:';

/** One note line from the report's warnings: the first, and how many more `atskills triggers` shows. */
function warningNote(report: ResidentReport): string | undefined {
  const [first, ...rest] = report.warnings;
  if (!first) return undefined;
  const more = rest.length ? ` (and ${rest.length} more: run \`atskills triggers\`)` : '';
  return `warning: line ${first.line} "${first.text}": ${first.message}${more}`;
}

/** The session-start answer, or undefined when there is nothing to say (no rows, no warnings). */
export function residentAnswer(report: ResidentReport, notes: readonly string[]): string | undefined {
  const allNotes = [warningNote(report), ...notes].filter((n): n is string => n !== undefined);
  if (report.block === '' && allNotes.length === 0) return undefined;
  const noteText = allNotes.map((n) => `(atskills note: ${n.replace(/\s+/g, ' ').trim()})`);
  const compose = (rows: string, left: number) => {
    const framed =
      rows === '' ? '' : frameUntrusted('resident', { count: String(report.entries.length) }, rows);
    const cut = left
      ? `(atskills: ${left} more resident skill${left === 1 ? '' : 's'} left out to fit the context; run \`atskills prompt\` to see them all.)`
      : '';
    return [UNTRUSTED_NOTICE, INTRO, framed, cut, ...noteText].filter((p) => p !== '').join('\n');
  };
  let text = compose(report.block, 0);
  if (text.length <= ANSWER_CAP && Buffer.byteLength(text) <= ANSWER_CAP) return text;
  // Whole rows only: a row cut in half would name a skill without its identity.
  const rows = report.block.split('\n');
  const room = ANSWER_CAP - (compose('x', rows.length).length - 1) - 64;
  const kept = cutText(report.block, Math.max(0, room)).text.split('\n');
  if (kept.length && kept.length < rows.length && !rows.includes(kept.at(-1) as string)) kept.pop();
  text = compose(kept.join('\n'), rows.length - kept.length);
  return cutText(text, ANSWER_CAP).text;
}
