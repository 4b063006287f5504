import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { exitCodeFor } from '../exit-codes.js';

/**
 * `atskills expand [message...]`: everything a host does for one message - resolve every reference (all at
 * once), apply `:save` and `:install`, and print the injection: the standing notice, one framed section per
 * distinct identity in message order (a failed reference gets one line instead), and note lines, within the
 * 10,000-character cap. The message comes from stdin when it is `-` or missing, so that quotes, backticks
 * and `$(...)` in it never pass through a shell (SPEC 2.5). The exit code is that of the first failure (a
 * `:save` that conflicts counts as one, though the project's copy is printed). At most
 * MESSAGE_REFERENCE_CAP distinct references are resolved; a note on stderr counts the rest.
 */
export function registerExpand(program: Command, ctx: CliContext): void {
  program
    .command('expand')
    .description('Resolve every reference of a message, apply :save/:install, print the injection block')
    .argument('[message...]', 'the message text; "-" or nothing reads it from stdin')
    .option('--json', 'print {"items":[...]} with one resolved object or error per reference')
    .option('--offline', 'never touch the network')
    .option('--yes', 'let :install add a skill the hub flagged (never one judged malicious)')
    .addHelpText(
      'after',
      "\nThe message is read from stdin when it is \"-\" or missing (never put a user's message on a command line):\n  atskills expand - <<'EOF'\n  deploy with @skills:deploy/runbook and @skills:gh:acme/ops/rollback:save\n  EOF",
    )
    .action(async (words: string[], opts: { json?: boolean; offline?: boolean; yes?: boolean }) => {
      const message =
        words.length === 0 || (words.length === 1 && words[0] === '-')
          ? await ctx.readStdin()
          : words.join(' ');
      const [{ expandMessage }, { renderAnswer }] = await Promise.all([
        import('../expand-message.js'),
        import('../inject.js'),
      ]);
      const projectDir = await ctx.projectDir();
      const expansion = await expandMessage(await ctx.resolver(), message, {
        projectDir,
        offline: opts.offline ?? false,
        approveInstall: () => opts.yes === true,
      });
      if (expansion.firstError !== undefined) ctx.fail(exitCodeFor(expansion.firstError));
      // Notes go to stderr with --json too: what :save / :install did, and references left out past the cap.
      for (const note of expansion.notes) ctx.err(note);
      if (opts.json) return ctx.json({ items: expansion.items });
      if (expansion.parts.length > 0) ctx.out(renderAnswer(expansion.parts, [], projectDir));
    });
}
