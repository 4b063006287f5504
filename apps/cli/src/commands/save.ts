import type { ConflictChoice, SaveOutcome, saveSkill } from '@atskills/protocol/node';
import { type Command, Option } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { renderSaveOutcome } from '../format/save.js';
import { identityArgument } from './identity-argument.js';

/** `atskills save [--on-conflict keep|refetch|merge] <identity>`: copy a cloud skill into the project. */
export function registerSave(program: Command, ctx: CliContext): void {
  program
    .command('save')
    .description(
      'Copy a cloud skill into .atskills/<disk path>/ with a .source stamp; saving again refreshes it',
    )
    .argument('<identity>', 'gh:owner/repo/path or hub:team/collection/path')
    .addOption(
      new Option(
        '--on-conflict <choice>',
        'when the saved copy was edited: keep it, refetch (overwrite) or merge (print both)',
      ).choices(['keep', 'refetch', 'merge']),
    )
    .option('--json', 'print the outcome as JSON')
    .option('--offline', 'save from the cache without checking upstream')
    .addHelpText(
      'after',
      '\nExamples:\n  atskills save gh:obra/superpowers/skills/brainstorming\n  atskills save --on-conflict merge gh:obra/superpowers/skills/brainstorming',
    )
    .action(
      async (identity: string, opts: { onConflict?: ConflictChoice; json?: boolean; offline?: boolean }) => {
        const { saveSkill } = await import('@atskills/protocol/node');
        const options: Parameters<typeof saveSkill>[2] = {
          projectDir: await ctx.projectDir(),
          offline: opts.offline ?? false,
        };
        if (opts.onConflict) options.onConflict = opts.onConflict;
        const outcome: SaveOutcome = await saveSkill(
          await ctx.resolver(),
          identityArgument(identity, 'save', ['save']),
          options,
        );
        // Keep and merge leave the conflict standing: the exit code says so, the output says what to do.
        if (outcome.action === 'merge') ctx.fail(EXIT.conflict);
        if (opts.json) ctx.json(outcome);
        else ctx.out(renderSaveOutcome(outcome));
        if (outcome.stale) ctx.err(`warning: saved from a stale cache: ${outcome.staleReason}`);
      },
    );
}
