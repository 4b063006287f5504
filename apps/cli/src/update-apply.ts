import { isProtocolError } from '@atskills/protocol';
import { ResolveError, type SaveOutcome } from '@atskills/protocol/node';
import { EXIT, type ExitCode, exitCodeFor } from './exit-codes.js';
import { errorJson } from './format/resolved.js';

/** One identity's result in `update` (its `--json` results, field for field). */
export interface UpdateResult {
  identity: string;
  action: 'refreshed' | 'up-to-date' | 'conflict' | 'failed';
  revision?: string;
  latestRevision?: string;
  reason?: string;
  changed?: string[];
  error?: Record<string, unknown>;
}

/** The results, their tallies, and the exit code of the run. */
export interface UpdateRun {
  results: UpdateResult[];
  summary: { refreshed: number; upToDate: number; conflicts: number; failed: number };
  /** 6 when any conflict stands, else that of the first failure, else 0 (as `update --help` says). */
  exitCode: ExitCode;
}

/**
 * Saves each target again (SPEC 1.5) through `save` (the command passes `saveSkill` with no conflict
 * choice, so an edited copy throws `conflict` and is left as it is) and tells apart refreshed, up to date,
 * conflict and failed. One failure never stops the others.
 */
export async function applyUpdate(
  targets: string[],
  save: (identity: string) => Promise<SaveOutcome>,
): Promise<UpdateRun> {
  const results: UpdateResult[] = [];
  let exitCode: ExitCode = EXIT.ok;
  const fail = (code: ExitCode) => {
    if (exitCode === EXIT.ok || code === EXIT.conflict) exitCode = code;
  };
  for (const identity of targets) {
    try {
      const outcome = await save(identity);
      if (outcome.stale) {
        // The upstream check failed (gone, unreachable): the copy was not brought up to date, whatever the
        // cache held, so this is a failure with the check's reason rather than "up to date".
        const code = outcome.staleCode ?? 'network';
        fail(exitCodeFor(new ResolveError(code, outcome.staleReason ?? 'the upstream check failed')));
        results.push({
          identity,
          action: 'failed',
          revision: outcome.revision,
          error: { code, message: outcome.staleReason ?? 'the upstream check failed' },
        });
        continue;
      }
      results.push({
        identity,
        action: outcome.action === 'refreshed' ? 'refreshed' : 'up-to-date',
        revision: outcome.revision,
        latestRevision: outcome.latestRevision,
      });
    } catch (error) {
      if (isProtocolError(error) && error.code === 'conflict') {
        fail(EXIT.conflict);
        const details = error.details ?? {};
        results.push({
          identity,
          action: 'conflict',
          reason: String(details.reason ?? error.message),
          changed: Array.isArray(details.changed) ? (details.changed as string[]) : [],
          ...(typeof details.latestRevision === 'string' ? { latestRevision: details.latestRevision } : {}),
        });
      } else {
        fail(exitCodeFor(error));
        results.push({ identity, action: 'failed', error: errorJson(error).error });
      }
    }
  }
  const count = (action: UpdateResult['action']) => results.filter((r) => r.action === action).length;
  return {
    results,
    summary: {
      refreshed: count('refreshed'),
      upToDate: count('up-to-date'),
      conflicts: count('conflict'),
      failed: count('failed'),
    },
    exitCode,
  };
}
