import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/**
 * `atskills prompt [--json] [--framed]`: the exact resident block a host splices into its system prompt
 * (flagged skills' rows end with `[flagged: ...]`, skills judged malicious are left out with a warning), or
 * with `--framed` exactly what the session-start hooks inject: the block in the untrusted frame.
 */
export function registerPrompt(program: Command, ctx: CliContext): void {
  program
    .command('prompt')
    .description('Print the resident block (one row per .autotrigger skill) and its token count')
    .option('--json', 'print {"block","tokens","entries","warnings"}')
    .option('--offline', 'resolve cloud lines from the cache only')
    .option('--framed', 'print what the session-start hook injects: the block framed as third-party text')
    .addHelpText(
      'after',
      '\nExample:\n  atskills prompt > resident.txt   # the block on stdout, the count on stderr',
    )
    .action(async (opts: { json?: boolean; offline?: boolean; framed?: boolean }) => {
      const { residentBlock } = await import('@atskills/protocol/node');
      const report = await residentBlock(await ctx.resolver(), {
        projectDir: await ctx.projectDir(),
        offline: opts.offline ?? false,
        countTokens: !opts.framed,
      });
      if (opts.json) return ctx.json(report);
      if (opts.framed) {
        const { residentAnswer } = await import('../resident.js');
        const answer = residentAnswer(report, []);
        if (answer) ctx.out(answer);
        return;
      }
      // The block goes to stdout byte for byte (no added newline when empty) so hosts can splice it verbatim.
      if (report.block !== '') ctx.io.stdout.write(`${report.block}\n`);
      for (const w of report.warnings) ctx.err(`warning: line ${w.line} "${w.text}": ${w.message}`);
      ctx.err(`${report.entries.length} skills, ${report.tokens} tokens (o200k_base)`);
    });
}
