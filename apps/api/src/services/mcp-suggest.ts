import type { ReadScope } from '@atskills/db';
import {
  activeFlagCodes,
  frameUntrusted,
  SUGGEST_MAX_MESSAGE,
  UNLIKELY_SUGGESTION_BELOW,
  UNTRUSTED_NOTICE,
} from '@atskills/protocol';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { SearchHitResponse } from '../schemas.js';
import type { SuggestEngine } from '../suggest/engine.js';
import { suggestSkills } from './suggest.js';

const DESCRIPTION =
  "Suggests skills for the user's message: pass the message the user just typed (code, logs and quoted text " +
  'included: the hub finds the need in it). Call it when the user asks for a task and you do not already ' +
  'know a skill for it; do not call it for chit-chat or for a skill the user already named. Each result is a ' +
  'paste-ready @skills: reference with its description and `score`, the estimated probability (0 to 1, the ' +
  `same meaning for every message) that the skill helps (results under ${UNLIKELY_SUGGESTION_BELOW} rarely do: about 6 in 100 on the ` +
  "hub's judged messages); `matched` is the part of the message it answers. " +
  '`abstained: true` (no results) means no skill fits well enough: carry on without one. Read a suggested ' +
  'skill (resolve_skill) before following it.';

/**
 * Registers the `suggest_skills` tool (SPEC 2.7) on a caller's MCP server. `answer` is how the server runs
 * every tool (mcp-server.ts): an error becomes its shared problem result (status, code, detail, the
 * problem's extensions and `retryAfterSeconds`), and one that is no hub problem is logged and answered as
 * `internal`, its text never shown. Passed in, as mcp-server.ts imports this file.
 */
export function registerSuggestTool(
  server: McpServer,
  deps: { suggestEngine?: SuggestEngine | undefined; viewer: ReadScope },
  answer: (run: () => Promise<CallToolResult>) => Promise<CallToolResult>,
): void {
  const engine = deps.suggestEngine;
  if (!engine) return;
  server.registerTool(
    'suggest_skills',
    {
      title: 'Suggest skills for a message',
      description: DESCRIPTION,
      inputSchema: {
        message: z
          .string()
          .trim()
          .min(1)
          .max(SUGGEST_MAX_MESSAGE)
          // Line breaks and tabs belong to messages (code, logs); NUL never does and cannot reach Postgres.
          .refine((text) => !text.includes('\u0000'), { message: 'must not contain NUL characters' })
          .describe("The user's message, as typed (code blocks, logs and quoted text included)"),
        limit: z
          .number()
          .int()
          .min(1)
          .max(10)
          .default(5)
          .describe('How many skills at most (1-10, default 5); fewer or none when fewer fit'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answer(async () => {
        const page = await suggestSkills(engine, deps.viewer, args.message, args.limit);
        // The hub never suggests a skill it judged malicious; other flags are named, as search_skills does.
        const results = page.results.map((r) => ({
          ...toolListing(r),
          score: r.score,
          matched: r.matched,
        }));
        // Descriptions are third-party text: they reach the model inside the frame, like every tool's, each
        // named with its identity, revision and flags (SPEC 2.8).
        const text = page.abstained
          ? 'No skill fits this message well enough (abstained).'
          : `${UNTRUSTED_NOTICE}\n${frameUntrusted(
              'suggestions',
              { count: String(results.length) },
              results
                .map(
                  (r) =>
                    `${r.reference} (revision ${r.revision}, score ${r.score}${r.flags ? `, flags: ${r.flags.join(', ')}` : ''}, for "${r.matched}"): ${r.description.replace(/\s+/g, ' ')}`,
                )
                .join('\n'),
            )}`;
        return {
          content: [{ type: 'text', text }],
          structuredContent: { results, abstained: page.abstained },
        };
      }),
  );
}

/**
 * What the search and suggestion tools list of a result: the fields of a /v1/search result (SPEC 2.1), so an
 * agent on MCP can filter and rank as one on REST, and the flags that hold as codes.
 */
export function toolListing(r: SearchHitResponse) {
  const flags = activeFlagCodes(r.flags);
  return {
    reference: r.reference,
    identity: r.identity,
    revision: r.revision,
    name: r.name,
    description: r.description,
    source: r.source,
    repository: r.repository,
    path: r.path,
    popularity: r.popularity,
    descriptionTokens: r.descriptionTokens,
    ...(flags.length ? { flags } : {}),
  };
}
