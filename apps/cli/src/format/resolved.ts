import { isProtocolError, renderMenu } from '@atskills/protocol';
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
      body: r.body,
      dir: r.dir,
      ...(r.problems ? { problems: r.problems } : {}),
    };
  }
  return {
    kind: 'menu',
    identity: r.identity,
    revision: r.revision,
    stale: r.stale,
    items: r.items.map((i) => ({ identity: i.identity, name: i.name ?? '', description: i.description })),
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

/**
 * What a host injects for one resolved identity: a header naming identity, revision, freshness and folder
 * (so the agent can open the skill's other files), then the whole SKILL.md body; a folder gives its menu.
 */
export function renderInjection(r: Resolved): string {
  const status = r.stale ? `stale (${r.staleReason ?? 'not checked'})` : 'fresh';
  if (r.kind === 'skill') {
    const head = `<skill identity="${attr(r.identity)}" name="${attr(r.name)}" revision="${attr(r.revision)}" status="${attr(status)}" folder="${attr(r.dir)}">`;
    return `${head}\n${r.body.replace(/^\n+/, '').replace(/\n+$/, '')}\n</skill>`;
  }
  const head = `<skills-menu identity="${attr(r.identity)}" revision="${attr(r.revision)}" status="${attr(status)}" count="${r.items.length}">`;
  const hint = 'Reference one of these with @skills:<identity> to load it.';
  const rows = r.items.length === 0 ? '(no skills here)' : renderMenu(r.items);
  return `${head}\n${hint}\n${rows}\n</skills-menu>`;
}

/** The injection of a failed reference: the agent learns what went wrong and what to do. */
export function renderFailure(identity: string, error: unknown): string {
  const code = isProtocolError(error) ? error.code : 'failure';
  const message = error instanceof Error ? error.message : String(error);
  return `<skill-error identity="${attr(identity)}" code="${attr(code)}">\n${message}\n</skill-error>`;
}

function attr(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\n/g, ' ');
}

/** A message shown next to its identity, without the `<identity>: ` it may start with (named once). */
export function withoutIdentity(identity: string, message: string): string {
  return message.startsWith(`${identity}: `) ? message.slice(identity.length + 2) : message;
}
