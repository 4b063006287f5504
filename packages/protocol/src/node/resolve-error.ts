import { ProtocolError } from '../errors.js';

/** Why a resolve, save or hub call failed; each code maps to one documented CLI exit code. */
export type ResolveErrorCode =
  | 'offline'
  | 'network'
  | 'not-found'
  | 'gone'
  | 'no-access'
  | 'over-cap'
  | 'conflict'
  | 'bad-archive'
  /** The hub judged the skill malicious: nothing of it is written or loaded (SPEC 2.8). */
  | 'refused'
  | 'usage';

/** A resolution failure that the user can act on; `details` carries e.g. `count` and `subcollections`. */
export class ResolveError extends ProtocolError {
  declare readonly code: ResolveErrorCode;

  constructor(code: ResolveErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'ResolveError';
  }
}

/** Whether a failure means the source could not be asked at all (so a cached copy may stand in). */
export function isUnreachable(error: unknown): boolean {
  return error instanceof ResolveError && (error.code === 'offline' || error.code === 'network');
}
