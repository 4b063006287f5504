import { SUGGEST_MAX_MESSAGE, type SuggestResult, trimTrailingSlashes } from '@atskills/protocol';

/** How much of a message over SUGGEST_MAX_MESSAGE is kept from its head (code points); its tail gets the rest. */
export const SUGGEST_MESSAGE_HEAD = 2_000;

/** What stands for the middle left out of a long message. */
const ELISION = '\n…\n';

/**
 * The message as the hook sends it: trimmed, and when longer than the hub reads, its head and its tail joined
 * by "\n…\n". The ask usually comes last, after pasted logs or code, so the tail gets most of the room.
 * Counted as the hub's schema counts (zod's `.max` on the trimmed string counts code points, a lone
 * surrogate as one), so the hub never refuses it for its length; never cut inside a surrogate pair. Only the
 * head and the tail are walked: a message of many megabytes is never copied into code points.
 */
export function fitSuggestMessage(message: string): string {
  const text = message.trim();
  // A code point is one or two units: a string that fits in units fits, and most messages are short.
  if (text.length <= SUGGEST_MAX_MESSAGE || pointsEnd(text, SUGGEST_MAX_MESSAGE) === text.length) return text;
  const tail = SUGGEST_MAX_MESSAGE - SUGGEST_MESSAGE_HEAD - codePointCount(ELISION);
  return `${text.slice(0, pointsEnd(text, SUGGEST_MESSAGE_HEAD))}${ELISION}${text.slice(pointsStart(text, tail))}`;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The index where the first `count` code points of `text` end (its length when it has fewer). */
function pointsEnd(text: string, count: number): number {
  let at = 0;
  for (let n = 0; n < count && at < text.length; n++)
    at += isHighSurrogate(text.charCodeAt(at)) && isLowSurrogate(text.charCodeAt(at + 1)) ? 2 : 1;
  return at;
}

/** The index where the last `count` code points of `text` start (0 when it has fewer). */
function pointsStart(text: string, count: number): number {
  let at = text.length;
  for (let n = 0; n < count && at > 0; n++)
    at -= isLowSurrogate(text.charCodeAt(at - 1)) && isHighSurrogate(text.charCodeAt(at - 2)) ? 2 : 1;
  return at;
}

/** The length of `text` in code points, as the hub's schema measures a message (a lone surrogate is one). */
export function codePointCount(text: string): number {
  let pairs = 0;
  for (let at = 0; at < text.length - 1; at++)
    if (isHighSurrogate(text.charCodeAt(at)) && isLowSurrogate(text.charCodeAt(at + 1))) {
      pairs++;
      at++;
    }
  return text.length - pairs;
}

/** The hub to ask: its base URL and, for private skills, a token (the CLI's ClientSettings fit). */
export interface SuggestHub {
  hubUrl: string;
  hubToken?: string | undefined;
}

/**
 * Suggestions for a message from the hub (POST /v1/suggest), for the user-prompt hook: never throws, and
 * answers [] when the hub abstains, is slower than `deadlineMs`, is down or answers something unreadable
 * (a prompt must never wait on, or fail because of, a suggestion).
 */
export async function fetchSuggestions(
  hub: SuggestHub,
  message: string,
  options: { limit?: number; deadlineMs?: number } = {},
): Promise<SuggestResult[]> {
  try {
    const text = fitSuggestMessage(message);
    if (text === '') return [];
    // The resolver's start-up entry (already loaded for the settings), not the node barrel: the hook's
    // request leaves before anything heavy loads.
    const { httpRequest, SUGGEST_TIMEOUT_HEADER } = await import('@atskills/protocol/node/resolving');
    const timeoutMs = Math.max(1, Math.floor(options.deadlineMs ?? 800));
    const answer = await httpRequest(`${trimTrailingSlashes(hub.hubUrl)}/v1/suggest`, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        ...(hub.hubToken ? { authorization: `Bearer ${hub.hubToken}` } : {}),
        // A hub too busy to answer by then says so at once (503), instead of after the whole wait.
        [SUGGEST_TIMEOUT_HEADER]: String(timeoutMs),
      },
      body: Buffer.from(
        JSON.stringify({ message: text, limit: Math.min(10, Math.max(1, options.limit ?? 3)) }),
      ),
      timeoutMs,
    });
    if (!answer.ok) return [];
    return readSuggestions(JSON.parse(answer.body.toString('utf8')));
  } catch {
    return [];
  }
}

/**
 * The results of a /v1/suggest answer, checked by hand for what the hook uses (no zod on the hook's path):
 * [] when it abstained or is not an answer; results without a string identity, name or description, or
 * without a score in [0, 1], are dropped; flags without a string code are dropped.
 */
export function readSuggestions(answer: unknown): SuggestResult[] {
  const { results, abstained } = (answer ?? {}) as { results?: unknown; abstained?: unknown };
  if (abstained !== false || !Array.isArray(results)) return [];
  const out: SuggestResult[] = [];
  for (const r of results as Record<string, unknown>[]) {
    if (!r || typeof r !== 'object') continue;
    const { identity, name, description, score } = r;
    if (typeof identity !== 'string' || typeof name !== 'string' || typeof description !== 'string') continue;
    if (typeof score !== 'number' || !(score >= 0 && score <= 1)) continue;
    const flags = Array.isArray(r.flags)
      ? (r.flags as { code?: unknown }[]).filter((f) => typeof f?.code === 'string')
      : [];
    out.push({ ...(r as unknown as SuggestResult), flags: flags as SuggestResult['flags'] });
  }
  return out;
}
