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

/** The commands with `--offline`: a skill already cached stands in for an unreachable source there. */
const OFFLINE_COMMANDS: ReadonlySet<string> = new Set([
  'get',
  'expand',
  'save',
  'install',
  'triggers',
  'prompt',
  'list',
  'remove',
]);

/** The commands that only talk to the hub's API: git (ATSKILLS_GIT_BASE) plays no part in them. */
const HUB_COMMANDS: ReadonlySet<string> = new Set(['search', 'suggest', 'publish', 'whoami', 'link']);

/**
 * What to do about an error whose message says only what happened (an unreachable source), worded for the
 * command that failed (`command`, as typed): appended to the printed message; '' when the message already
 * says what to do.
 */
export function adviceFor(error: unknown, command?: string): string {
  if (!isProtocolError(error)) return '';
  if (error.code !== 'offline' || /--offline forbids/.test(error.message)) return '';
  if (command === 'login') return ' Check the network and the URL given to --hub.';
  if (command !== undefined && HUB_COMMANDS.has(command))
    return ' Check the network and ATSKILLS_HUB (or the hub `atskills login` stored), or try again later.';
  const cached =
    command === undefined || OFFLINE_COMMANDS.has(command)
      ? '; a skill already cached is served with --offline'
      : '';
  return ` Check the network and ATSKILLS_HUB / ATSKILLS_GIT_BASE${cached}.`;
}
