import { ProtocolError } from './errors.js';

/** The `.source` file of a saved skill: where it came from and at which revision. */
export interface SourceStamp {
  identity: string;
  /** YYYY-MM-DD */
  date: string;
  revision: string;
}

/** Two lines: the identity, then `YYYY-MM-DD rev:<revision>`; with a trailing newline. */
export function formatSourceStamp(s: SourceStamp): string {
  return `${s.identity}\n${s.date} rev:${s.revision}\n`;
}

/** Parses a `.source` file; throws ProtocolError 'bad-source-stamp'. */
export function parseSourceStamp(text: string): SourceStamp {
  throw new ProtocolError('bad-source-stamp', `not implemented: ${text.length}`);
}
