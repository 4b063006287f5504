import { normalizeIdentity, refusingVerdict, UNTRUSTED_NOTICE } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { adviceFor, EXIT, exitCodeFor } from '../exit-codes.js';
import { errorJson, hubWarningLines, resolvedJson } from '../format/resolved.js';
import { identityArgument } from './identity-argument.js';

/**
 * `atskills get [--json] [--offline] <identity...>`: resolve and print what a host injects. Its text output
 * goes to agents as often as to people, so it is always the untrusted frame (SPEC 2.8): the standing notice
 * once, each skill framed with its identity, revision, source, flags and a project-relative path (a skill the
 * hub judged malicious is one refusal line, exit 1). Bodies are whole: `get` is how an agent reads the rest
 * of a body a hook cut. `--json` is for programs: the raw body with its `flags`.
 */
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
      const { failureLine, renderResolved } = await import('../inject.js');
      const results: unknown[] = [];
      const texts: string[] = [];
      for (const identity of identities) {
        try {
          const resolved = await resolver.resolve(identityArgument(identity, 'get'), {
            projectDir,
            offline: opts.offline ?? false,
          });
          results.push(resolvedJson(resolved));
          texts.push(renderResolved(resolved, projectDir));
          const verdict = refusingVerdict(resolved.flags);
          if (verdict) {
            ctx.fail(EXIT.failure);
            if (!opts.json)
              ctx.err(`atskills: ${resolved.identity} was refused: the hub judged it ${verdict}.`);
          }
          if (resolved.stale && !opts.json)
            ctx.err(`warning: ${resolved.identity} is stale: ${resolved.staleReason}`);
          if (resolved.kind === 'skill' && resolved.verdictUnchecked && !opts.json)
            ctx.err(`warning: ${resolved.verdictUnchecked}`);
          if (!opts.json) for (const line of hubWarningLines(resolved)) ctx.err(`warning: ${line}`);
          if (resolved.kind === 'skill')
            for (const p of resolved.problems ?? []) ctx.err(`warning: ${p.file}: ${p.message} [${p.rule}]`);
        } catch (error) {
          ctx.fail(exitCodeFor(error));
          results.push(errorJson(error, identity));
          if (!opts.json) ctx.err(`atskills: ${withIdentity(identity, error)}${adviceFor(error, 'get')}`);
          texts.push(failureLine(identity, error));
        }
      }
      if (opts.json) ctx.json(results.length === 1 ? results[0] : results);
      else if (ctx.exitCode === 0 || identities.length > 1 || texts.some((t) => t.startsWith('Refused')))
        ctx.out([UNTRUSTED_NOTICE, ...texts].join('\n\n'));
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
