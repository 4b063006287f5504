import type { IdentityError } from './errors.js';
import type { Identity } from './identity.js';

/** One `@skills:` reference found in a message. */
export interface Reference extends Identity {
  save: boolean;
  install: boolean;
  /** On-disk folder relative to the project root. */
  disk: string;
  /** The reference exactly as written. */
  raw: string;
  /** Offsets of `raw` in the message (end exclusive). */
  start: number;
  end: number;
}

/** A reference scan result: either a parsed reference or the error of a bad one. */
export type ScannedReference =
  | { ok: true; ref: Reference }
  | { ok: false; raw: string; error: IdentityError };

/** All references of a message, in order; scans without throwing. */
export function scanReferences(_message: string): ScannedReference[] {
  return [];
}

/** All references of a message, in order; throws the IdentityError of the first bad one. */
export function extractReferences(message: string): Reference[] {
  const out: Reference[] = [];
  for (const r of scanReferences(message)) {
    if (!r.ok) throw r.error;
    out.push(r.ref);
  }
  return out;
}

/** The `@skills:` text of a reference, percent-encoding what must be so it re-parses the same. */
export function formatReference(ref: { identity: string; save?: boolean; install?: boolean }): string {
  return `@skills:${ref.identity}${ref.save ? ':save' : ''}${ref.install ? ':install' : ''}`;
}
