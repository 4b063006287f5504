import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { errorJson, withoutIdentity } from '../format/resolved.js';
import { shortRev } from '../format/save.js';

/** One identity's result in `update`. */
interface UpdateResult {
  identity: string;
  action: 'refreshed' | 'up-to-date' | 'conflict' | 'failed';
  revision?: string;
  latestRevision?: string;
  reason?: string;
  changed?: string[];
  error?: Record<string, unknown>;
}

/**
 * `atskills update [<identity>...]`: save-again (SPEC 1.5) for each saved skill. An untouched copy is
 * replaced by the latest; an edited or unverifiable one is a conflict and is left exactly as it is. A
 * summary closes the run; the exit code is 6 when any conflict stands, else that of the first failure.
 */
export function registerUpdate(program: Command, ctx: CliContext): void {
  program
    .command('update')
    .description('Save again every saved skill (or the ones named): untouched copies get the latest')
    .argument('[identity...]', 'saved skills to update (none named: every one)')
    .option('--all', 'every skill saved in this project (the same as naming none)')
    .option('--json', 'print {"results":[...],"summary":{...}}')
    .addHelpText(
      'after',
      '\nWith no identity (or --all) every skill saved in this project is updated.\nEdited copies are conflicts: nothing is touched; resolve one with\n`atskills save --on-conflict keep|refetch|merge <identity>`.\nExit codes: 0 done, 6 a conflict stands, 3/4/7 a skill is gone, unreachable or forbidden.\n\nExamples:\n  atskills update --all\n  atskills update gh:obra/superpowers/skills/brainstorming',
    )
    .action(async (identities: string[], opts: { all?: boolean; json?: boolean }) => {
      const [{ normalizeIdentity, isProtocolError }, { ResolveError, saveSkill }, { readInventory }] =
        await Promise.all([
          import('@atskills/protocol'),
          import('@atskills/protocol/node'),
          import('../inventory.js'),
        ]);
      if (opts.all && identities.length > 0)
        throw new ResolveError('usage', 'Name the saved skills to update, or pass --all (not both).');
      // No identity named means every saved skill, as the help says.
      const all = opts.all === true || identities.length === 0;
      const projectDir = await ctx.projectDir();
      const inventory = await readInventory(projectDir);
      const targets = all
        ? inventory.saved.filter((s) => !s.stampProblem).map((s) => s.identity)
        : identities.map((text) => normalizeIdentity(text));
      for (const target of targets)
        if (!all && !inventory.saved.some((s) => s.identity === target && !s.stampProblem))
          throw new ResolveError(
            'not-found',
            `${target} is not saved in this project (atskills list shows what is; atskills save adds it).`,
          );
      const resolver = await ctx.resolver();
      const results: UpdateResult[] = [];
      for (const identity of targets) {
        try {
          const outcome = await saveSkill(resolver, identity, { projectDir });
          results.push({
            identity,
            action: outcome.action === 'refreshed' ? 'refreshed' : 'up-to-date',
            revision: outcome.revision,
            latestRevision: outcome.latestRevision,
          });
        } catch (error) {
          if (isProtocolError(error) && error.code === 'conflict') {
            ctx.fail(EXIT.conflict);
            const details = error.details ?? {};
            results.push({
              identity,
              action: 'conflict',
              reason: String(details.reason ?? error.message),
              changed: Array.isArray(details.changed) ? (details.changed as string[]) : [],
              ...(typeof details.latestRevision === 'string'
                ? { latestRevision: details.latestRevision }
                : {}),
            });
          } else {
            ctx.fail(exitCodeFor(error));
            results.push({ identity, action: 'failed', error: errorJson(error).error });
          }
        }
      }
      const count = (action: UpdateResult['action']) => results.filter((r) => r.action === action).length;
      const summary = {
        refreshed: count('refreshed'),
        upToDate: count('up-to-date'),
        conflicts: count('conflict'),
        failed: count('failed'),
      };
      if (opts.json) return ctx.json({ results, summary });
      if (results.length === 0) return ctx.out('No saved skills to update.');
      for (const r of results) {
        if (r.action === 'refreshed') ctx.out(`updated     ${r.identity} -> ${shortRev(r.revision ?? '')}`);
        else if (r.action === 'up-to-date')
          ctx.out(`up to date  ${r.identity} (${shortRev(r.revision ?? '')})`);
        else if (r.action === 'conflict') ctx.out(`conflict    ${r.identity}: ${r.reason}; left as it is`);
        else
          ctx.out(
            `failed      ${r.identity}: ${withoutIdentity(r.identity, String(r.error?.message ?? ''))}`,
          );
      }
      ctx.out(
        `${summary.refreshed} updated, ${summary.upToDate} up to date, ${summary.conflicts} conflicts, ${summary.failed} failed.`,
      );
      if (summary.conflicts > 0)
        ctx.out(
          'Resolve a conflict with `atskills save --on-conflict keep|refetch|merge <identity>` (merge prints both versions).',
        );
    });
}
