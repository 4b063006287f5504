import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills triggers [--json]`: each `.autotrigger` line and what it resolves to. */
export function registerTriggers(program: Command, ctx: CliContext): void {
  program
    .command('triggers')
    .description('Show each .autotrigger line, the skills it selects, and lines that select nothing')
    .option('--json', 'print {"file","lines":[...],"warnings":[...]}')
    .option('--offline', 'expand whole-directory cloud lines (@hub:ns/coll/) from the cache only')
    .addHelpText('after', '\nExample:\n  atskills triggers')
    .action(async (opts: { json?: boolean; offline?: boolean }) => {
      const { listTriggers } = await import('@atskills/protocol/node');
      const report = await listTriggers(
        { projectDir: await ctx.projectDir(), offline: opts.offline ?? false },
        await ctx.resolver(),
      );
      if (opts.json) return ctx.json(report);
      if (report.lines.length === 0) ctx.out(`No lines in ${report.file}.`);
      for (const line of report.lines) {
        const what = line.negated
          ? '(excludes)'
          : line.identities.length === 0
            ? '(nothing)'
            : line.identities.join(', ');
        ctx.out(`${String(line.line).padStart(3)}  ${line.text}  ->  ${what}`);
      }
      for (const w of report.warnings) ctx.err(`warning: line ${w.line} "${w.text}": ${w.message}`);
    });
}
