import {
  activeFlagCodes,
  byLikelihood,
  flaggedNote,
  SUGGEST_MAX_MESSAGE,
  SUGGEST_TIMEOUT_HEADER,
  SUGGEST_TIMEOUT_MAX_MS,
  SuggestBody,
  SuggestResponse,
  type SuggestResult,
  UNLIKELY_SUGGESTION_BELOW,
} from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { oneLine } from '../format/printable.js';
import { codePointCount } from '../suggest-client.js';

/**
 * How long `atskills suggest` waits for the hub by default (ms). A suggestion is worth seconds, not the
 * minutes a download may take (ATSKILLS_FETCH_TIMEOUT_MS, 300 s by default): a hub that accepts and never
 * answers must not hold the command for five minutes. A user who sets ATSKILLS_FETCH_TIMEOUT_MS gets that.
 */
export const SUGGEST_COMMAND_TIMEOUT_MS = 10_000;

/** The deadline of one `atskills suggest` call: ATSKILLS_FETCH_TIMEOUT_MS when the user set it, else 10 s. */
export function suggestTimeoutMs(env: NodeJS.ProcessEnv, fetchTimeoutMs: number): number {
  const stated = Number(env.ATSKILLS_FETCH_TIMEOUT_MS);
  return Number.isInteger(stated) && stated > 0 ? fetchTimeoutMs : SUGGEST_COMMAND_TIMEOUT_MS;
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
      const message = (words.length > 0 ? words.join(' ') : await ctx.readStdin()).trim();
      if (message === '') throw new ResolveError('usage', 'Give the message on stdin or as arguments.');
      // The hub's own request schema decides (its `.max` counts code points, not UTF-16 units), so a message
      // is refused here exactly when the hub would refuse it, with the count the hub goes by.
      const request = SuggestBody.safeParse({ message, limit });
      if (!request.success) {
        const tooLong = request.error.issues.some((i) => i.path[0] === 'message' && i.code === 'too_big');
        throw new ResolveError(
          'usage',
          tooLong
            ? `The message is ${codePointCount(message).toLocaleString('en-US')} characters; the hub reads up to ${SUGGEST_MAX_MESSAGE.toLocaleString('en-US')}.`
            : `The hub would refuse this request (${request.error.issues[0]?.message}).`,
        );
      }
      const settings = await ctx.settings();
      const timeoutMs = suggestTimeoutMs(ctx.io.env, settings.fetchTimeoutMs);
      const raw = await hubRequest(settings, 'POST', '/v1/suggest', {
        body: Buffer.from(JSON.stringify(request.data)),
        contentType: 'application/json',
        timeoutMs,
        // A hub whose queue would keep this call past its deadline says so at once (503 with Retry-After).
        headers: { [SUGGEST_TIMEOUT_HEADER]: String(Math.min(timeoutMs, SUGGEST_TIMEOUT_MAX_MS)) },
      });
      const answer = SuggestResponse.safeParse(raw);
      if (!answer.success)
        throw new ResolveError(
          'network',
          `The hub's suggestion answer does not match the protocol (${answer.error.issues[0]?.message}).`,
        );
      // The hub's answer as it came, every field of it (kind, stars, uses...), once it is known to be one.
      if (opts.json) return ctx.json(raw);
      if (answer.data.abstained)
        return ctx.out(
          'No skill fits this message well enough. To look yourself: atskills search <the words that matter>',
        );
      for (const line of suggestionLines(answer.data.results)) ctx.out(line);
    });
}

/**
 * The suggestions as `atskills suggest` prints them: each reference with its score, the part of the message
 * it answers and its description, the hub's text without control characters (a terminal would act on
 * them); those scored under UNLIKELY_SUGGESTION_BELOW after a line that says they rarely help (the hook
 * leaves them out).
 */
export function suggestionLines(results: readonly SuggestResult[]): string[] {
  const { likely, unlikely } = byLikelihood(results);
  const entry = (r: SuggestResult) => {
    const flags = flaggedNote(activeFlagCodes(r.flags).map((code) => oneLine(code)));
    return `@skills:${oneLine(r.identity)}  (score ${r.score.toFixed(2)}, for "${oneLine(r.matched)}")${flags}\n    ${oneLine(r.name)}: ${oneLine(r.description, 200)}`;
  };
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
