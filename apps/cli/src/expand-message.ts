// One message's references, resolved the way `atskills expand` and every host's user-prompt hook do it
// (SPEC 1.4, 2.5): all at once (the hub's in one batch, the rest in parallel), `:save` and `:install`
// applied, each reference answered by its framed text, a refusal, or one line saying why it is missing.
import { isProtocolError, type Reference, type ScannedReference, scanReferences } from '@atskills/protocol';
import type { Resolver } from '@atskills/protocol/node';
import { errorJson, resolvedJson } from './format/resolved.js';
import type { AnswerPart } from './inject.js';
import { failureLine } from './inject.js';

/** How one message is expanded. */
export interface ExpandOptions {
  projectDir: string;
  offline?: boolean;
  /** A hook's budget (epoch ms): past it answers come from the cache, marked stale. */
  deadline?: number;
  /** Asked before `:install` writes a flagged skill's line; absent: a flagged skill is not installed. */
  approveInstall?: (identity: string, flags: readonly string[]) => boolean | Promise<boolean>;
  /** Install nothing whose flags could not be checked (hooks: nobody can be asked). */
  requireCheck?: boolean;
}

/** What expanding one message gave. */
export interface Expansion {
  parts: AnswerPart[];
  /** One line each: what `:save` / `:install` did, and why a copy is stale. */
  notes: string[];
  /** `expand --json` items, in message order. */
  items: unknown[];
  /** The first failure's error (for the exit code), if any. */
  firstError?: unknown;
}

/**
 * The most distinct references one message resolves: the hub answers at most 128 identities per batch
 * (SPEC 2.2) and charges each against the caller's rate limit, and past a few dozen the answer cap leaves
 * room for names only. Later references are left out with one note line.
 */
export const MESSAGE_REFERENCE_CAP = 128;

/**
 * The message's references, one per identity in the order they first appear, each with every `:save` and
 * `:install` any of its mentions asked for (the skill is then loaded once); at most MESSAGE_REFERENCE_CAP,
 * `leftOut` counting the rest.
 */
function referencesOf(message: string): { refs: ScannedReference[]; leftOut: number } {
  const byIdentity = new Map<string, Reference>();
  const refs: ScannedReference[] = [];
  for (const scanned of scanReferences(message)) {
    if (!scanned.ok) {
      refs.push(scanned);
      continue;
    }
    const first = byIdentity.get(scanned.ref.identity);
    if (first) {
      first.save ||= scanned.ref.save;
      first.install ||= scanned.ref.install;
      continue;
    }
    const ref = { ...scanned.ref };
    byIdentity.set(ref.identity, ref);
    refs.push({ ok: true, ref });
  }
  return {
    refs: refs.slice(0, MESSAGE_REFERENCE_CAP),
    leftOut: Math.max(0, refs.length - MESSAGE_REFERENCE_CAP),
  };
}

/** Expands every reference of `message` (each one's work starts at once; results keep message order). */
export async function expandMessage(
  resolver: Resolver,
  message: string,
  options: ExpandOptions,
): Promise<Expansion> {
  const { installSkill, saveSkill } = await import('@atskills/protocol/node');
  const { refs, leftOut } = referencesOf(message);
  const { projectDir } = options;
  const offline = options.offline ?? false;
  const resolveOptions = {
    projectDir,
    offline,
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
  };
  // The hub's references in one batch, with the verdicts on the project's saved copies of them at their saved
  // revisions: a hub that does not answer costs one wait, in a hook or not.
  if (!offline)
    void resolver.probeBatch(
      refs.flatMap((s) => (s.ok ? [s.ref.identity] : [])),
      { projectDir, ...(options.deadline !== undefined ? { deadline: options.deadline } : {}) },
    );
  // Installs edit one file: they take turns (the rest of each reference's work runs in parallel).
  let installs: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = installs.then(work, work);
    installs = run.catch(() => undefined);
    return run;
  };
  const outcomes = await Promise.all(
    refs.map(async (scanned) => {
      const notes: string[] = [];
      if (!scanned.ok) return { notes, error: scanned.error, identity: scanned.raw };
      const { ref } = scanned;
      let conflict: Error | undefined;
      try {
        if (ref.save && ref.source !== 'local') {
          const saved = await saveSkill(resolver, ref, {
            projectDir,
            offline,
            ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
          }).catch((error: unknown) => {
            // A skill the hub judged malicious is not saved; the reference itself answers its refusal below.
            if (isProtocolError(error) && error.code === 'refused') return undefined;
            // A conflicting save touches nothing (SPEC 1.5) and the project's copy is the answer (SPEC 1.4):
            // it is loaded below, with a note, and the conflict still sets the exit code.
            if (isProtocolError(error) && error.code === 'conflict') return error;
            throw error;
          });
          if (saved instanceof Error) {
            conflict = saved;
            notes.push(
              `not saved: ${saved.message} Apply one with \`atskills save --on-conflict <choice> ${ref.identity}\`; the project's copy was loaded.`,
            );
          } else
            notes.push(
              saved
                ? `${saved.action}: ${ref.identity} -> ${ref.disk} (rev ${saved.revision})`
                : `not saved: ${ref.identity} (the hub judged it malicious)`,
            );
        }
        if (ref.install) {
          const installed = await inTurn(() =>
            installSkill(resolver, ref, {
              ...resolveOptions,
              approve: (flags) => options.approveInstall?.(ref.identity, flags) ?? false,
              ...(options.requireCheck ? { requireCheck: true } : {}),
            }),
          );
          if (installed.refused === 'malicious')
            notes.push(`not installed: ${ref.identity} (the hub judged it malicious)`);
          else if (installed.refused === 'unchecked')
            notes.push(
              `not installed: ${ref.identity} could not be checked now (${installed.warning ?? 'no answer'}); run \`atskills install ${ref.identity}\` later`,
            );
          else if (installed.refused === 'locked')
            notes.push(
              `not installed: ${ref.identity}: ${installed.warning ?? '.autotrigger is locked'}; run \`atskills install ${ref.identity}\` later`,
            );
          else if (installed.refused === 'flagged')
            notes.push(
              `not installed: ${ref.identity} is flagged (${installed.flags?.join(', ')}); the user may run \`atskills install --yes ${ref.identity}\` after reading it`,
            );
          else notes.push(`${installed.changed ? 'installed' : 'already installed'}: ${installed.line}`);
        }
        const resolved = await resolver.resolve(ref, resolveOptions);
        if (resolved.stale) notes.push(`${ref.identity} is stale: ${resolved.staleReason}`);
        return { notes, resolved, conflict };
      } catch (error) {
        return { notes, error, identity: ref.identity };
      }
    }),
  );
  const expansion: Expansion = { parts: [], notes: [], items: [] };
  for (const outcome of outcomes) {
    expansion.notes.push(...outcome.notes);
    if ('resolved' in outcome && outcome.resolved) {
      if (outcome.conflict) expansion.firstError ??= outcome.conflict;
      expansion.parts.push({ kind: 'resolved', resolved: outcome.resolved });
      expansion.items.push(resolvedJson(outcome.resolved));
      continue;
    }
    const { error, identity } = outcome as { error: unknown; identity: string };
    expansion.firstError ??= error;
    expansion.parts.push({ kind: 'line', text: failureLine(identity, error) });
    expansion.items.push(errorJson(error, identity));
  }
  if (leftOut > 0)
    expansion.notes.push(
      `${leftOut} more reference${leftOut === 1 ? '' : 's'} left out: one message resolves at most its first ${MESSAGE_REFERENCE_CAP} distinct references; reference the rest in another message, or run \`atskills get <identity>\` for each`,
    );
  return expansion;
}
