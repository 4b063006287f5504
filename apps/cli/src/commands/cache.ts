import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills cache ls|clear`: the machine-wide cache. */
export function registerCache(program: Command, ctx: CliContext): void {
  const cache = program.command('cache').description('Inspect or clear the machine-wide cache');

  cache
    .command('ls')
    .description('List cached identities with revision, kind and fetch time')
    .option('--json', 'print {"dir","entries":[...]}')
    .addHelpText('after', '\nExample:\n  atskills cache ls')
    .action(async (opts: { json?: boolean }) => {
      const { clientCache } = await import('@atskills/protocol/node');
      const settings = await ctx.settings();
      const entries = await clientCache(settings).list();
      if (opts.json) {
        return ctx.json({
          dir: settings.cacheDir,
          entries: entries.map((e) => ({
            identity: e.identity,
            origin: e.origin ?? null,
            kind: e.kind,
            revision: e.revision,
            fetchedAt: e.fetchedAt,
            checkedAt: e.checkedAt,
          })),
        });
      }
      ctx.err(`cache: ${settings.cacheDir}`);
      if (entries.length === 0) return ctx.out('(empty)');
      for (const e of entries)
        ctx.out(`${e.identity}\t${e.kind}\t${e.revision.slice(0, 12)}\tfetched ${e.fetchedAt}`);
    });

  cache
    .command('clear')
    .description('Remove every cached entry')
    .addHelpText('after', '\nExample:\n  atskills cache clear')
    .action(async () => {
      const { clientCache } = await import('@atskills/protocol/node');
      const settings = await ctx.settings();
      const count = await clientCache(settings).clear();
      ctx.out(`Removed ${count} cached entries from ${settings.cacheDir}`);
    });
}
