import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { shortRev } from '../format/save.js';

/** One saved skill as `list` shows it. */
interface ListedSkill {
  identity: string;
  dir: string;
  revision: string;
  savedAt: string;
  /** true / false; null when it could not be verified (offline, upstream gone, bad `.source`). */
  edited: boolean | null;
  editedFiles: string[];
  installed: boolean;
  problem?: string;
}

/**
 * `atskills list [--json] [--offline]`: every skill the project saved (identity, folder, `.source` revision
 * and date, whether the copy was edited, whether it is installed) and every `.autotrigger` line.
 */
export function registerList(program: Command, ctx: CliContext): void {
  program
    .command('list')
    .description('List the skills saved in this project and the .autotrigger lines')
    .option('--json', 'print {"saved":[...],"autotrigger":{"file","lines":[...]}}')
    .option('--offline', 'check edits against the cache only (unknown when it lacks the saved revision)')
    .addHelpText(
      'after',
      '\nAn edited copy differs from upstream at the revision its .source records (save refuses to\noverwrite it). Exit code 0.\n\nExamples:\n  atskills list\n  atskills list --json',
    )
    .action(async (opts: { json?: boolean; offline?: boolean }) => {
      const [{ checkSavedCopy, listTriggers }, { readInventory }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../inventory.js'),
      ]);
      const projectDir = await ctx.projectDir();
      const resolver = await ctx.resolver();
      const inventory = await readInventory(projectDir);
      const saved: ListedSkill[] = [];
      for (const s of inventory.saved) {
        const row: ListedSkill = { ...s, edited: null, editedFiles: [] };
        delete (row as { stampProblem?: string }).stampProblem;
        if (s.stampProblem) row.problem = s.stampProblem;
        else {
          const check = await checkSavedCopy(resolver, s.identity, {
            projectDir,
            offline: opts.offline ?? false,
          });
          row.edited = check.state === 'unverifiable' ? null : check.state === 'edited';
          row.editedFiles = check.changed;
          if (check.state === 'unverifiable' && check.reason) row.problem = check.reason;
        }
        saved.push(row);
      }
      const triggers = await listTriggers({ projectDir });
      if (opts.json) return ctx.json({ saved, autotrigger: { file: triggers.file, lines: triggers.lines } });
      if (saved.length === 0) ctx.out('No saved skills (atskills save <identity> adds one).');
      else ctx.out(`Saved skills (${saved.length}):`);
      for (const s of saved) {
        const edited =
          s.edited === null
            ? 'edited: unknown'
            : s.edited
              ? `edited (${s.editedFiles.join(', ')})`
              : 'unedited';
        ctx.out(
          `  ${s.identity}  rev ${shortRev(s.revision)}  saved ${s.savedAt || '?'}  ${edited}  ${s.installed ? 'installed' : 'not installed'}`,
        );
        ctx.out(`      ${s.dir}${s.problem ? `  (${s.problem})` : ''}`);
      }
      if (triggers.lines.length === 0) return ctx.out(`No lines in ${triggers.file}.`);
      ctx.out(`${triggers.file}:`);
      for (const line of triggers.lines) ctx.out(`  ${String(line.line).padStart(3)}  ${line.text}`);
    });
}
