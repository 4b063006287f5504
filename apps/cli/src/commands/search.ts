import { activeFlagCodes, flaggedNote, SearchResponse } from '@atskills/protocol';
import { type Command, Option } from 'commander';
import type { CliContext } from '../context.js';
import { oneLine } from '../format/printable.js';

/** `atskills search <query...>`: the hub's search (GET /v1/search?q=). */
export function registerSearch(program: Command, ctx: CliContext): void {
  program
    .command('search')
    .description('Search the hub for skills')
    .argument('<query...>', 'words to search for')
    .option('--limit <n>', 'how many results per page (1-100)', '20')
    .addOption(new Option('--source <source>', 'only gh: or hub: skills').choices(['gh', 'hub']))
    .option('--owner <owner>', 'only skills of this GitHub owner')
    .option('--repo <repo>', 'only skills of this GitHub repository (with --owner)')
    .option('--namespace <namespace>', 'only skills of this hub namespace')
    .option('--cursor <cursor>', 'the page after a previous answer (printed as "next page:")')
    .option('--pages <n>', 'follow the cursor for up to n pages', '1')
    .option('--json', 'print the hub answer as JSON ({"results","nextCursor"})')
    .addHelpText(
      'after',
      '\nExamples:\n  atskills search terraform plan\n  atskills search --source hub --namespace acme deploy\n  atskills search --owner anthropics --limit 50 --pages 3 pdf',
    )
    .action(async (words: string[], opts: SearchOptions) => {
      const [{ ResolveError }, { hubRequest }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../hub-client.js'),
      ]);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new ResolveError('usage', '--limit must be a whole number from 1 to 100.');
      const pages = Number(opts.pages);
      if (!Number.isInteger(pages) || pages < 1 || pages > 100)
        throw new ResolveError('usage', '--pages must be a whole number from 1 to 100.');
      const settings = await ctx.settings();
      const results: SearchResponse['results'] = [];
      // --json prints what the hub sent, every field of it (the schema keeps only those printed here).
      const sent: unknown[] = [];
      let cursor = opts.cursor;
      let first: Record<string, unknown> | undefined;
      for (let page = 0; page < pages; page++) {
        const query = new URLSearchParams({ q: words.join(' '), limit: String(limit) });
        for (const key of ['source', 'owner', 'repo', 'namespace'] as const) {
          const value = opts[key];
          if (value) query.set(key, value);
        }
        if (cursor) query.set('cursor', cursor);
        const raw = await hubRequest(settings, 'GET', `/v1/search?${query}`);
        const answer = SearchResponse.safeParse(raw);
        if (!answer.success)
          throw new ResolveError(
            'network',
            `The hub's search answer does not match the protocol (${answer.error.issues[0]?.message}).`,
          );
        const sentPage = raw as Record<string, unknown> & { results: unknown[] };
        first ??= sentPage;
        sent.push(...sentPage.results);
        results.push(...answer.data.results);
        cursor = answer.data.nextCursor ?? undefined;
        if (!cursor) break;
      }
      if (opts.json) return ctx.json({ ...first, results: sent, nextCursor: cursor ?? null });
      if (results.length === 0) return ctx.out('No skills found.');
      for (const r of results) {
        // A flag an accepted dispute suppressed no longer holds: named as `atskills suggest` and the hook do.
        // The hub's text goes to a terminal, which would act on control characters in it: they are left out.
        const flags = activeFlagCodes(r.flags).map((code) => oneLine(code));
        ctx.out(
          `@skills:${oneLine(r.identity)}${flaggedNote(flags)}\n    ${oneLine(r.name)}: ${oneLine(r.description, 200)}`,
        );
      }
      if (cursor) ctx.err(`next page: atskills search --cursor ${oneLine(cursor)} ${words.join(' ')}`);
    });
}

interface SearchOptions {
  limit: string;
  pages: string;
  source?: 'gh' | 'hub';
  owner?: string;
  repo?: string;
  namespace?: string;
  cursor?: string;
  json?: boolean;
}
