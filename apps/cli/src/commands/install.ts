import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { identityArgument } from './identity-argument.js';

/** `atskills install <identity>` and `atskills uninstall <identity>`: one `.autotrigger` line each way. */
export function registerInstall(program: Command, ctx: CliContext): void {
  program
    .command('install')
    .description('Add the identity to .atskills/.autotrigger so it is resident in every session')
    .argument('<identity>', 'bare path, gh:... or hub:...')
    .option('--offline', 'do not check the identity upstream')
    .option('--yes', 'install a skill the hub flagged without asking (never one judged malicious)')
    .option(
      '--json',
      'print {"identity","line","changed","skills"?,"warning"?,"problems"?,"flags"?,"flaggedSkills"?,"refused"?}',
    )
    .addHelpText(
      'after',
      '\nA folder of skills installs as one whole-directory line (@hub:acme/playbooks/): every skill of its\nmenu, within K = 128. A skill the hub flagged is resident in every later session, so installing one\nasks first on a terminal and needs --yes otherwise; one the hub judged malicious is never installed.\n\nExamples:\n  atskills install deploy/runbook\n  atskills install gh:obra/superpowers/skills/brainstorming\n  atskills install hub:acme/playbooks',
    )
    .action(async (text: string, opts: { offline?: boolean; json?: boolean; yes?: boolean }) => {
      const identity = identityArgument(text, 'install', ['install']);
      const { installSkill } = await import('@atskills/protocol/node');
      const outcome = await installSkill(await ctx.resolver(), identity, {
        projectDir: await ctx.projectDir(),
        offline: opts.offline ?? false,
        approve: async (flags) =>
          opts.yes === true ||
          ctx.confirm(
            `The hub flagged ${identity} (${flags.join(', ')}); it would be resident in every session. Install it?`,
          ),
      });
      if (outcome.refused) {
        ctx.fail(EXIT.failure);
        if (opts.json) return ctx.json(outcome);
        // A folder: which of its skills carry the flags.
        const which = outcome.flaggedSkills ? ` in ${outcome.flaggedSkills.join('; ')}` : '';
        ctx.err(
          outcome.refused === 'unchecked'
            ? `atskills: ${outcome.identity} was not installed: it could not be checked (${outcome.warning}).`
            : outcome.refused === 'malicious'
              ? `atskills: ${outcome.identity} was not installed: the hub judged it malicious (${outcome.flags?.join(', ')}${which}).`
              : `atskills: ${outcome.identity} was not installed: the hub flagged it (${outcome.flags?.join(', ')}${which}). Read it with \`atskills get ${outcome.identity}\`, then run \`atskills install --yes ${outcome.identity}\` to install it anyway.`,
        );
        return;
      }
      if (outcome.warning) ctx.err(`warning: ${outcome.warning}`);
      for (const p of outcome.problems ?? []) ctx.err(`warning: ${p.file}: ${p.message} [${p.rule}]`);
      if (opts.json) return ctx.json(outcome);
      ctx.out(outcome.changed ? `Installed: ${outcome.line}` : `Already installed: ${outcome.line}`);
      // A folder: say what the whole-directory line follows, so nothing is installed by surprise.
      if (outcome.skills && outcome.skills.length > 0)
        ctx.out(`  follows ${outcome.skills.length} skills: ${outcome.skills.join(', ')}`);
    });

  program
    .command('uninstall')
    .description('Remove exactly the line `install` added from .atskills/.autotrigger')
    .argument('<identity>', 'bare path, gh:... or hub:...')
    .addHelpText('after', '\nExample:\n  atskills uninstall deploy/runbook')
    .action(async (identity: string) => {
      const { uninstallSkill } = await import('@atskills/protocol/node');
      const outcome = await uninstallSkill(identityArgument(identity, 'uninstall', ['install']), {
        projectDir: await ctx.projectDir(),
      });
      ctx.out(outcome.changed ? `Uninstalled: ${outcome.line}` : `Not installed: ${outcome.line}`);
      warnStillResident(ctx, outcome);
    });
}

/** Says which other `.autotrigger` lines keep an uninstalled skill resident, and the line that drops it. */
export function warnStillResident(
  ctx: CliContext,
  outcome: { identity: string; stillSelectedBy?: { line: number; text: string }[]; exclusion?: string },
): void {
  if (!outcome.stillSelectedBy || !outcome.exclusion) return;
  const lines = outcome.stillSelectedBy.map((l) => `line ${l.line} "${l.text}"`).join(', ');
  ctx.err(
    `warning: ${outcome.identity} is still resident: .atskills/.autotrigger ${lines} selects it. Add the line "${outcome.exclusion}" to that file to leave it out.`,
  );
}
