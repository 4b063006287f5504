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
