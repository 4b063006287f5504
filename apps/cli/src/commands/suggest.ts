import {
  activeFlagCodes,
  byLikelihood,
  flaggedNote,
  SUGGEST_MAX_MESSAGE,
  SuggestResponse,
  type SuggestResult,
  UNLIKELY_SUGGESTION_BELOW,
} from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

async function readStdin(ctx: CliContext): Promise<string> {
  if (!ctx.io.stdin || (ctx.io.stdin as { isTTY?: boolean }).isTTY) return '';
  let text = '';
  for await (const chunk of ctx.io.stdin) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

/** `atskills suggest`: the skills that would help with a message (POST /v1/suggest), the message on stdin. */
export function registerSuggest(program: Command, ctx: CliContext): void {
  program
    .command('suggest')
    .description('Suggest skills for a message to your agent (the message on stdin, or as arguments)')
    .argument('[message...]', 'the message (read from stdin when not given)')
    .option('--limit <n>', 'how many suggestions at most (1-10)', '5')
    .option('--json', 'print the hub answer as JSON ({"results","abstained"})')
    .addHelpText(
      'after',
      '\nExamples:\n  echo "the CI on my PR fails on lint, fix it" | atskills suggest\n  atskills suggest --json write release notes from my commits',
    )
    .action(async (words: string[], opts: { limit: string; json?: boolean }) => {
      const [{ ResolveError }, { hubRequest }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../hub-client.js'),
      ]);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10)
        throw new ResolveError('usage', '--limit must be a whole number from 1 to 10.');
      const message = (words.length > 0 ? words.join(' ') : await readStdin(ctx)).trim();
      if (message === '') throw new ResolveError('usage', 'Give the message on stdin or as arguments.');
      if (message.length > SUGGEST_MAX_MESSAGE)
        throw new ResolveError(
          'usage',
          `The message is ${message.length} characters; the hub reads up to ${SUGGEST_MAX_MESSAGE.toLocaleString('en-US')}.`,
        );
      const settings = await ctx.settings();
      const answer = SuggestResponse.safeParse(
        await hubRequest(settings, 'POST', '/v1/suggest', {
          body: Buffer.from(JSON.stringify({ message, limit })),
          contentType: 'application/json',
        }),
      );
      if (!answer.success)
        throw new ResolveError(
          'network',
          `The hub's suggestion answer does not match the protocol (${answer.error.issues[0]?.message}).`,
        );
      if (opts.json) return ctx.json(answer.data);
      if (answer.data.abstained)
        return ctx.out(
          'No skill fits this message well enough. To look yourself: atskills search <the words that matter>',
        );
      for (const line of suggestionLines(answer.data.results)) ctx.out(line);
    });
}

/**
 * The suggestions as `atskills suggest` prints them: each reference with its score, the part of the message
 * it answers and its description; those scored under UNLIKELY_SUGGESTION_BELOW after a line that says they
 * rarely help (the hook leaves them out).
 */
export function suggestionLines(results: readonly SuggestResult[]): string[] {
  const { likely, unlikely } = byLikelihood(results);
  const entry = (r: SuggestResult) =>
    `@skills:${r.identity}  (score ${r.score.toFixed(2)}, for "${r.matched}")${flaggedNote(activeFlagCodes(r.flags))}\n    ${r.name}: ${r.description.replace(/\s+/g, ' ').slice(0, 200)}`;
  const lines = likely.map(entry);
  if (unlikely.length > 0) {
    lines.push(
      likely.length === 0
        ? `None is likely to help (every score is under ${UNLIKELY_SUGGESTION_BELOW.toFixed(2)}; such suggestions rarely help):`
        : `Less likely to help (scored under ${UNLIKELY_SUGGESTION_BELOW.toFixed(2)}; such suggestions rarely help):`,
      ...unlikely.map(entry),
    );
  }
  return lines;
}
