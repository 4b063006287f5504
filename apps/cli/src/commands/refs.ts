import { scanReferences } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { errorJson } from '../format/resolved.js';

/** `atskills refs [--json] <message...>`: the references in a message. */
export function registerRefs(program: Command, ctx: CliContext): void {
  program
    .command('refs')
    .description('List the @skills: references in a message')
    .argument('<message...>', 'the message text (quote it, or pass it as several words)')
    .option('--json', 'print {"refs":[...]} as in conformance/references.json')
    .addHelpText(
      'after',
      '\nExample:\n  atskills refs --json "use @skills:gh:obra/superpowers/skills/brainstorming:save now"',
    )
    .action((words: string[], opts: { json?: boolean }) => {
      const scanned = scanReferences(words.join(' '));
      const bad = scanned.find((s) => !s.ok);
      if (bad && !bad.ok) {
        ctx.fail(EXIT.usage);
        if (opts.json) ctx.json({ error: { ...errorJson(bad.error).error, reference: bad.raw } });
        else ctx.err(`atskills: bad reference ${bad.raw}: ${bad.error.message} [${bad.error.code}]`);
        return;
      }
      const refs = scanned.flatMap((s) =>
        s.ok
          ? [
              {
                identity: s.ref.identity,
                source: s.ref.source,
                path: s.ref.path,
                save: s.ref.save,
                install: s.ref.install,
                disk: s.ref.disk,
              },
            ]
          : [],
      );
      if (opts.json) return ctx.json({ refs });
      if (refs.length === 0) return ctx.err('No @skills: references in the message.');
      for (const r of refs) {
        const flags = [r.save ? ':save' : '', r.install ? ':install' : ''].join('');
        ctx.out(`${r.identity}${flags}\t${r.disk}`);
      }
    });
}
