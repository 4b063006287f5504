import { SearchResponse } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills search <query...>`: the hub's search (GET /v1/search?q=). */
export function registerSearch(program: Command, ctx: CliContext): void {
  program
    .command('search')
    .description('Search the hub for skills')
    .argument('<query...>', 'words to search for')
    .option('--limit <n>', 'how many results (1-100)', '20')
    .option('--json', 'print the hub answer as JSON')
    .addHelpText('after', '\nExample:\n  atskills search terraform plan')
    .action(async (words: string[], opts: { limit: string; json?: boolean }) => {
      const [{ ResolveError }, { hubRequest }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../hub-client.js'),
      ]);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new ResolveError('usage', '--limit must be a whole number from 1 to 100.');
      const query = new URLSearchParams({ q: words.join(' '), limit: String(limit) });
      const answer = SearchResponse.safeParse(
        await hubRequest(await ctx.settings(), 'GET', `/v1/search?${query}`),
      );
      if (!answer.success)
        throw new ResolveError(
          'network',
          `The hub's search answer does not match the protocol (${answer.error.issues[0]?.message}).`,
        );
      if (opts.json) return ctx.json(answer.data);
      if (answer.data.results.length === 0) return ctx.out('No skills found.');
      for (const r of answer.data.results) {
        const flags = r.flags.length > 0 ? `  [${r.flags.map((f) => f.code).join(', ')}]` : '';
        ctx.out(
          `@skills:${r.identity}${flags}\n    ${r.name}: ${r.description.replace(/\s+/g, ' ').slice(0, 200)}`,
        );
      }
    });
}
