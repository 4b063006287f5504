import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { identityArgument } from './identity-argument.js';
import { warnStillResident } from './install.js';

/**
 * `atskills remove [--force] <identity>`: deletes the saved copy and the identity's `.autotrigger` line.
 * An edited copy (or one that cannot be verified) is refused unless --force: it may hold the project's work.
 */
export function registerRemove(program: Command, ctx: CliContext): void {
  program
    .command('remove')
    .description('Delete a saved skill and its .autotrigger line (refuses an edited copy unless --force)')
    .argument('<identity>', 'gh:owner/repo/path or hub:team/collection/path')
    .option('--force', 'delete an edited or unverifiable copy too')
    .option('--offline', 'verify the copy against the cache only')
    .option('--json', 'print {"identity","removed","dir"?,"lines":[...]}')
    .addHelpText(
      'after',
      '\nExit codes: 0 removed, 3 nothing saved or installed for it, 6 the copy was edited (nothing touched).\n\nExamples:\n  atskills remove gh:obra/superpowers/skills/brainstorming\n  atskills remove --force hub:acme/playbooks/deploy',
    )
    .action(async (identity: string, opts: { force?: boolean; offline?: boolean; json?: boolean }) => {
      const [{ parseIdentity, diskPath }, node, { readInventory, findSaved }] = await Promise.all([
        import('@atskills/protocol'),
        import('@atskills/protocol/node'),
        import('../inventory.js'),
      ]);
      const { ResolveError, checkSavedCopy, uninstallSkill } = node;
      const id = parseIdentity(identityArgument(identity, 'remove'));
      const projectDir = await ctx.projectDir();
      const inventory = await readInventory(projectDir);
      const saved = findSaved(inventory, id.identity);
      const dir = diskPath(id);
      if (!saved) {
        const exists = inventory.saved.some((s) => s.dir === dir);
        if (id.source === 'local' || exists) {
          if (!opts.force)
            throw new ResolveError(
              'conflict',
              `${dir} has no .source of ${id.identity}, so it is the project's own work; nothing was removed. Delete it yourself, or run \`atskills remove --force ${id.identity}\`.`,
            );
        }
      } else if (!opts.force) {
        const check = await checkSavedCopy(await ctx.resolver(), id, {
          projectDir,
          offline: opts.offline ?? false,
        });
        if (check.state !== 'unedited')
          throw new ResolveError(
            'conflict',
            `${dir} ${check.reason}; nothing was removed. Keep it, or run \`atskills remove --force ${id.identity}\` to delete it anyway.`,
            { identity: id.identity, changed: check.changed },
          );
      }
      const { rm, stat } = await import('node:fs/promises');
      const path = await import('node:path');
      const folder = path.join(projectDir, dir);
      const present = await stat(folder).then(
        () => true,
        () => false,
      );
      const lines: string[] = [];
      const outcome = await uninstallSkill(id, { projectDir });
      if (outcome.changed) lines.push(outcome.line);
      if (present && (saved || opts.force)) await rm(folder, { recursive: true, force: true });
      const removed = (present && (saved !== undefined || opts.force === true)) || lines.length > 0;
      if (!removed) {
        ctx.fail(EXIT.notFound);
        if (opts.json) return ctx.json({ identity: id.identity, removed: false, lines });
        return ctx.err(
          `atskills: ${id.identity} is neither saved in ${dir} nor installed; nothing to remove (atskills list shows what is).`,
        );
      }
      if (opts.json)
        return ctx.json({ identity: id.identity, removed: true, ...(present ? { dir } : {}), lines });
      if (present) ctx.out(`Removed ${dir}`);
      for (const line of lines) ctx.out(`Uninstalled: ${line}`);
      warnStillResident(ctx, outcome);
    });
}
