import { isProtocolError, refusingVerdict } from '@atskills/protocol';
import type { Resolved } from '@atskills/protocol/node';

/** `get --json` shape of a resolved identity (exactly the fields the issue documents). */
export function resolvedJson(r: Resolved): Record<string, unknown> {
  if (r.kind === 'skill') {
    return {
      kind: 'skill',
      identity: r.identity,
      revision: r.revision,
      stale: r.stale,
      name: r.name,
      description: r.description,
      flags: r.flags,
      // `flags: []` of a saved copy whose verdict could not be asked means "unknown", not "none": say why.
      ...(r.verdictUnchecked ? { verdictUnchecked: r.verdictUnchecked } : {}),
      ...(r.hubWarnings ? { hubWarnings: r.hubWarnings } : {}),
      // A skill the hub judged malicious: its text never leaves the client, for programs either.
      ...(refusingVerdict(r.flags) ? { refused: refusingVerdict(r.flags), body: '' } : { body: r.body }),
      dir: r.dir,
      ...(r.problems ? { problems: r.problems } : {}),
    };
  }
  return {
    kind: 'menu',
    identity: r.identity,
    revision: r.revision,
    stale: r.stale,
    items: r.items.map((i) => ({
      identity: i.identity,
      name: i.name ?? '',
      description: i.description,
      ...(i.flags?.length ? { flags: i.flags } : {}),
      ...(i.refused ? { refused: true } : {}),
    })),
  };
}

/** `{"error":{"code","message",...details}}` for any failure. */
export function errorJson(error: unknown, identity?: string): { error: Record<string, unknown> } {
  if (isProtocolError(error)) {
    return {
      error: {
        code: error.code,
        message: error.message,
        ...(identity ? { identity } : {}),
        ...(error.details ?? {}),
      },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { error: { code: 'failure', message, ...(identity ? { identity } : {}) } };
}

/** A message shown next to its identity, without the `<identity>: ` it may start with (named once). */
export function withoutIdentity(identity: string, message: string): string {
  return message.startsWith(`${identity}: `) ? message.slice(identity.length + 2) : message;
}

const HUB_WARNING_TEXT: Record<string, string> = {
  'files-left-out':
    "the hub did not download some of its files (over its size limit), so they are missing here; the hub's answer names them (filesLeftOut)",
  'link-stale':
    'the hub could not read the GitHub repository its team links; this is the last revision it read',
};

/** One line per thing the hub said of its copy of a resolved skill (`files-left-out`, `link-stale`). */
export function hubWarningLines(r: Resolved): string[] {
  if (r.kind !== 'skill') return [];
  return (r.hubWarnings ?? []).map((code) => `${r.identity}: ${HUB_WARNING_TEXT[code] ?? code}`);
}
