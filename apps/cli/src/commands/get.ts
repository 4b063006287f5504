import { normalizeIdentity } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { adviceFor, exitCodeFor } from '../exit-codes.js';
import { errorJson, renderFailure, renderInjection, resolvedJson } from '../format/resolved.js';

/** `atskills get [--json] [--offline] <identity...>`: resolve and print what a host injects. */
export function registerGet(program: Command, ctx: CliContext): void {
  program
    .command('get')
    .description('Resolve identities (local first, then the cache) and print the skill or menu')
    .argument('<identity...>', 'bare path, gh:owner/repo[/path], hub:team/collection[/path] or a GitHub URL')
    .option('--json', 'print one JSON object per identity (an array when several)')
    .option('--offline', 'never touch the network: serve the cache (marked stale) or fail')
    .addHelpText(
      'after',
      '\nExamples:\n  atskills get gh:obra/superpowers/skills/brainstorming\n  atskills get --json deploy/runbook hub:acme/playbooks',
    )
    .action(async (identities: string[], opts: { json?: boolean; offline?: boolean }) => {
      const resolver = await ctx.resolver();
      const projectDir = await ctx.projectDir();
      const results: unknown[] = [];
      const texts: string[] = [];
      for (const identity of identities) {
        try {
          const resolved = await resolver.resolve(identity, { projectDir, offline: opts.offline ?? false });
          results.push(resolvedJson(resolved));
          texts.push(renderInjection(resolved));
          if (resolved.stale && !opts.json)
            ctx.err(`warning: ${resolved.identity} is stale: ${resolved.staleReason}`);
          if (resolved.kind === 'skill')
            for (const p of resolved.problems ?? []) ctx.err(`warning: ${p.file}: ${p.message} [${p.rule}]`);
        } catch (error) {
          ctx.fail(exitCodeFor(error));
          results.push(errorJson(error, identity));
          if (!opts.json) ctx.err(`atskills: ${withIdentity(identity, error)}${adviceFor(error)}`);
          texts.push(renderFailure(identity, error));
        }
      }
      if (opts.json) ctx.json(results.length === 1 ? results[0] : results);
      else if (ctx.exitCode === 0 || identities.length > 1) ctx.out(texts.join('\n\n'));
    });
}

/** The error's message naming the identity once: prefixed with it only when the message does not name it. */
function withIdentity(identity: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const named = (error as { details?: { identity?: unknown } }).details?.identity;
  let canonical = identity;
  try {
    canonical = normalizeIdentity(identity);
  } catch {
    // a bad identity: its error names the rule, the prefix names the text
  }
  const spellings = [identity, canonical, typeof named === 'string' ? named : identity];
  return spellings.some((s) => message.includes(s)) ? message : `${identity}: ${message}`;
}
