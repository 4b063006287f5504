import { isProtocolError } from '@atskills/protocol';
import type { SaveOutcome } from '@atskills/protocol/node';
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
  /** That of the first conflict (6) or failure, else 0. */
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
    if (exitCode === EXIT.ok) exitCode = code;
  };
  for (const identity of targets) {
    try {
      const outcome = await save(identity);
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
