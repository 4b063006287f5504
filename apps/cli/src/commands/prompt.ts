import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills prompt [--json]`: the exact resident block a host splices into its system prompt. */
export function registerPrompt(program: Command, ctx: CliContext): void {
  program
    .command('prompt')
    .description('Print the resident block (one row per .autotrigger skill) and its token count')
    .option('--json', 'print {"block","tokens","entries","warnings"}')
    .option('--offline', 'resolve cloud lines from the cache only')
    .addHelpText(
      'after',
      '\nExample:\n  atskills prompt > resident.txt   # the block on stdout, the count on stderr',
    )
    .action(async (opts: { json?: boolean; offline?: boolean }) => {
      const { residentBlock } = await import('@atskills/protocol/node');
      const report = await residentBlock(await ctx.resolver(), {
        projectDir: await ctx.projectDir(),
        offline: opts.offline ?? false,
      });
      if (opts.json) return ctx.json(report);
      // The block goes to stdout byte for byte (no added newline when empty) so hosts can splice it verbatim.
      if (report.block !== '') ctx.io.stdout.write(`${report.block}\n`);
      for (const w of report.warnings) ctx.err(`warning: line ${w.line} "${w.text}": ${w.message}`);
      ctx.err(`${report.entries.length} skills, ${report.tokens} tokens (o200k_base)`);
    });
}
