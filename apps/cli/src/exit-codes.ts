import { IdentityError, isProtocolError } from '@atskills/protocol';

/** The documented exit codes of `atskills` (see README). */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  unreachable: 4,
  overCap: 5,
  conflict: 6,
  noAccess: 7,
  /** `outdated`: something saved or installed changed or is gone upstream. */
  outdated: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code an error stands for. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof IdentityError) return EXIT.usage;
  if (!isProtocolError(error)) return EXIT.failure;
  switch (error.code) {
    case 'usage':
      return EXIT.usage;
    case 'not-found':
    case 'gone':
      return EXIT.notFound;
    case 'offline':
    case 'network':
      return EXIT.unreachable;
    case 'over-cap':
      return EXIT.overCap;
    case 'conflict':
      return EXIT.conflict;
    case 'no-access':
      return EXIT.noAccess;
    default:
      return EXIT.failure;
  }
}

/**
 * What to do about an error whose message says only what happened (an unreachable source): appended to the
 * printed message; '' when the message already says what to do.
 */
export function adviceFor(error: unknown): string {
  if (!isProtocolError(error)) return '';
  if (error.code === 'offline' && !/--offline forbids/.test(error.message))
    return ' Check the network and ATSKILLS_HUB / ATSKILLS_GIT_BASE; a skill already cached is served with --offline.';
  return '';
}
