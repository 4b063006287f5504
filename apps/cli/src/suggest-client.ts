import { SuggestResponse, type SuggestResult } from '@atskills/protocol';

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
    const text = message.trim().slice(0, 8_000);
    if (text === '') return [];
    const { httpRequest } = await import('@atskills/protocol/node');
    const answer = await httpRequest(`${hub.hubUrl.replace(/\/+$/, '')}/v1/suggest`, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        ...(hub.hubToken ? { authorization: `Bearer ${hub.hubToken}` } : {}),
      },
      body: Buffer.from(
        JSON.stringify({ message: text, limit: Math.min(10, Math.max(1, options.limit ?? 3)) }),
      ),
      timeoutMs: options.deadlineMs ?? 800,
    });
    if (!answer.ok) return [];
    const parsed = SuggestResponse.safeParse(JSON.parse(answer.body.toString('utf8')));
    if (!parsed.success || parsed.data.abstained) return [];
    return parsed.data.results;
  } catch {
    return [];
  }
}
