import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { withoutIdentity } from '../format/resolved.js';
import { shortRev } from '../format/save.js';

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
      const [{ saveSkill }, { readInventory }, { planUpdate }, { applyUpdate }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../inventory.js'),
        import('../update-plan.js'),
        import('../update-apply.js'),
      ]);
      const projectDir = await ctx.projectDir();
      const targets = planUpdate(await readInventory(projectDir), identities, opts);
      const resolver = await ctx.resolver();
      const { results, summary, exitCode } = await applyUpdate(targets, (identity) =>
        saveSkill(resolver, identity, { projectDir }),
      );
      if (exitCode !== EXIT.ok) ctx.fail(exitCode);
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
