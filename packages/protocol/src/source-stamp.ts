import { ProtocolError } from './errors.js';
import { normalizeIdentity } from './identity.js';

/** The `.source` file of a saved skill: where it came from and at which revision. */
export interface SourceStamp {
  identity: string;
  /** YYYY-MM-DD */
  date: string;
  revision: string;
}

export const SOURCE_STAMP_FILE = '.source';

/**
 * Why a file may not be part of a published or indexed skill, or undefined when it may. A `.source` at the
 * skill's root is what `:save` writes (a shipped one makes every later save see a false "edited" copy),
 * and a nested `.atskills/` would make the saved copy a project root of its own. Compared without case:
 * the copies land on case-insensitive file systems too.
 */
export function reservedSkillPath(pathInSkill: string): string | undefined {
  const segments = pathInSkill.split('/').map((s) => s.toLowerCase());
  if (segments.length === 1 && segments[0] === SOURCE_STAMP_FILE)
    return `"${pathInSkill}" is reserved: :save writes the skill's ${SOURCE_STAMP_FILE} stamp there`;
  if (segments.includes('.atskills'))
    return `"${pathInSkill}" is inside a nested .atskills/ folder, which would take over the project root of a saved copy`;
  return undefined;
}
const SECOND_LINE = /^(\d{4})-(\d{2})-(\d{2}) rev:(\S+)$/;

/** Two lines: the identity, then `YYYY-MM-DD rev:<revision>`; with a trailing newline. */
export function formatSourceStamp(s: SourceStamp): string {
  return `${s.identity}\n${s.date} rev:${s.revision}\n`;
}

/** Parses a `.source` file (CRLF and trailing blank lines tolerated); throws ProtocolError 'bad-source-stamp'. */
export function parseSourceStamp(text: string): SourceStamp {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  while (lines.length > 0 && lines.at(-1)?.trim() === '') lines.pop();
  if (lines.length !== 2) {
    throw bad(`expected 2 lines (identity, then "YYYY-MM-DD rev:<revision>"), found ${lines.length}`);
  }
  const [identityLine = '', stampLine = ''] = lines.map((l) => l.trim());
  let identity: string;
  try {
    identity = normalizeIdentity(identityLine);
  } catch (error) {
    throw bad(`the first line is not a skill identity: ${(error as Error).message}`);
  }
  const match = SECOND_LINE.exec(stampLine);
  if (!match) throw bad('the second line must read "YYYY-MM-DD rev:<revision>"');
  const [, year, month, day, revision = ''] = match;
  const date = `${year}-${month}-${day}`;
  if (!isCalendarDate(Number(year), Number(month), Number(day)))
    throw bad(`"${date}" is not a calendar date`);
  return { identity, date, revision };
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

function bad(why: string): ProtocolError {
  return new ProtocolError('bad-source-stamp', `Unreadable .source file: ${why}.`);
}
