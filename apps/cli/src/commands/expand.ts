import { scanReferences } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { errorJson, renderFailure, renderInjection, resolvedJson } from '../format/resolved.js';

/**
 * `atskills expand <message...>`: everything a host does for one message - resolve every reference, apply
 * `:save` and `:install`, and print the injection block (one section per distinct identity, in message
 * order). Failed references get an error section too, so the block is always complete; the exit code is
 * that of the first failure.
 */
export function registerExpand(program: Command, ctx: CliContext): void {
  program
    .command('expand')
    .description('Resolve every reference of a message, apply :save/:install, print the injection block')
    .argument('<message...>', 'the message text')
    .option('--json', 'print {"items":[...]} with one resolved object or error per reference')
    .option('--offline', 'never touch the network')
    .addHelpText(
      'after',
      '\nExample:\n  atskills expand "deploy with @skills:deploy/runbook and @skills:gh:acme/ops/rollback:save"',
    )
    .action(async (words: string[], opts: { json?: boolean; offline?: boolean }) => {
      const { installSkill, saveSkill } = await import('@atskills/protocol/node');
      const resolver = await ctx.resolver();
      const projectDir = await ctx.projectDir();
      const offline = opts.offline ?? false;
      const sections: string[] = [];
      const items: unknown[] = [];
      const seen = new Set<string>();
      for (const scanned of scanReferences(words.join(' '))) {
        if (!scanned.ok) {
          ctx.fail(EXIT.usage);
          sections.push(renderFailure(scanned.raw, scanned.error));
          items.push({ ...errorJson(scanned.error, scanned.raw) });
          continue;
        }
        const ref = scanned.ref;
        if (seen.has(ref.identity) && !ref.save && !ref.install) continue;
        seen.add(ref.identity);
        try {
          if (ref.save && ref.source !== 'local') {
            const saved = await saveSkill(resolver, ref, { projectDir, offline });
            ctx.err(`${saved.action}: ${ref.identity} -> ${ref.disk} (rev ${saved.revision})`);
          }
          if (ref.install) {
            const installed = await installSkill(resolver, ref, { projectDir, offline });
            ctx.err(`${installed.changed ? 'installed' : 'already installed'}: ${installed.line}`);
          }
          const resolved = await resolver.resolve(ref, { projectDir, offline });
          sections.push(renderInjection(resolved));
          items.push(resolvedJson(resolved));
        } catch (error) {
          ctx.fail(exitCodeFor(error));
          sections.push(renderFailure(ref.identity, error));
          items.push(errorJson(error, ref.identity));
        }
      }
      if (opts.json) ctx.json({ items });
      else if (sections.length > 0) ctx.out(sections.join('\n\n'));
    });
}
