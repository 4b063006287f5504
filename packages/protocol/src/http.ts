import { z } from 'zod';

// The hub's wire format (SPEC part 2), shared by the server's route schemas and the client's parsers so
// the two cannot drift apart.

/** `files` of a skill: every regular file of the folder with its size and content hash. */
export const SkillFile = z.object({
  path: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type SkillFile = z.infer<typeof SkillFile>;

/** Safety flags attached to a skill (filled by the safety scanner). */
export const SafetyFlag = z.object({
  code: z.string(),
  severity: z.enum(['info', 'warning', 'danger']),
  message: z.string(),
  file: z.string().optional(),
  line: z.number().int().optional(),
  /** The text the rule matched (a short excerpt of the line). */
  excerpt: z.string().optional(),
  /** The skill revision the flag belongs to (flags are keyed by revision: a new revision is rescanned). */
  revision: z.string().optional(),
  /** True when hub administrators accepted a dispute of this rule for this content. */
  suppressed: z.boolean().optional(),
  /** The accepted report that suppressed it. */
  suppressedBy: z.number().int().optional(),
});
export type SafetyFlag = z.infer<typeof SafetyFlag>;

/** GET /v1/skills/<identity> when the identity is a skill. */
export const SkillResponse = z.object({
  kind: z.literal('skill'),
  identity: z.string(),
  revision: z.string(),
  name: z.string(),
  description: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  body: z.string(),
  files: z.array(SkillFile),
  flags: z.array(SafetyFlag),
  warnings: z.array(z.string()),
});
export type SkillResponse = z.infer<typeof SkillResponse>;

/** A menu row's verdict: its skill's flags, and whether the hub refuses it (SPEC 2.8). */
export const MenuRowVerdict = {
  flags: z
    .array(z.string())
    .optional()
    .describe("the skill's active safety flag codes (accepted disputes left out); absent when none"),
  refused: z
    .literal(true)
    .optional()
    .describe('the hub judged the skill malicious: no name, a refusal line for its description'),
};

/** One row of a menu, with its skill's verdict (a client marks or refuses the row by it). */
export const MenuResponseItem = z.object({
  identity: z.string(),
  name: z.string(),
  description: z.string(),
  ...MenuRowVerdict,
});
export type MenuResponseItem = z.infer<typeof MenuResponseItem>;

/** GET /v1/skills/<identity> when the identity is a folder without SKILL.md. */
export const MenuResponse = z.object({
  kind: z.literal('menu'),
  identity: z.string(),
  revision: z.string(),
  items: z.array(MenuResponseItem),
});
export type MenuResponse = z.infer<typeof MenuResponse>;

/** Either answer of GET /v1/skills/<identity>. */
export const ResolveResult = z.discriminatedUnion('kind', [SkillResponse, MenuResponse]);
export type ResolveResult = z.infer<typeof ResolveResult>;

/** RFC 9457 problem details with a stable `code`; extra members (count, subcollections, ...) allowed. */
export const ProblemDetails = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    code: z.string(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    requestId: z.string().optional(),
  })
  .catchall(z.unknown());
export type ProblemDetails = z.infer<typeof ProblemDetails>;

/** A sub-collection offered by an over-cap refusal. */
export const Subcollection = z.object({
  path: z.string(),
  identity: z.string().optional(),
  skills: z.number(),
});
export type Subcollection = z.infer<typeof Subcollection>;

/** POST /v1/resolve body: up to 128 identities, each with the revision the caller holds. */
export const ResolveRequest = z.object({
  items: z
    .array(
      z.object({
        identity: z.string().min(1).max(600),
        revision: z.string().max(200).optional(),
      }),
    )
    .min(1)
    .max(128),
});
export type ResolveRequest = z.infer<typeof ResolveRequest>;

/**
 * A skill's active safety flag codes in a batch answer (accepted disputes left out): what X-Skill-Flags
 * names, so a client can refuse a skill judged malicious, or name its flags, from the batch alone.
 */
const BatchFlags = z
  .array(z.string())
  .describe("the skill's active safety flag codes (accepted disputes left out), e.g. reported-malicious");

/** One answer of POST /v1/resolve. */
export const ResolveResponseItem = z.discriminatedUnion('status', [
  z.object({
    identity: z.string(),
    status: z.literal('unchanged'),
    revision: z.string(),
    /** Absent for a menu. */
    flags: BatchFlags.optional(),
  }),
  z.object({
    identity: z.string(),
    status: z.literal('changed'),
    revision: z.string(),
    kind: z.enum(['skill', 'menu']),
    name: z.string().optional(),
    description: z.string().optional(),
    frontmatter: z.record(z.string(), z.unknown()).optional(),
    /** Absent for a menu. */
    flags: BatchFlags.optional(),
  }),
  z.object({
    identity: z.string(),
    status: z.literal('gone'),
    lastRevision: z.string().optional(),
    lastSeen: z.string().optional(),
  }),
  z.object({ identity: z.string(), status: z.literal('not-found') }),
  /** A renamed or transferred repository: the identity it goes by now (what GET answers with 301). */
  z.object({ identity: z.string(), status: z.literal('moved'), location: z.string() }),
  z.object({
    identity: z.string(),
    status: z.literal('error'),
    code: z.string(),
    detail: z.string().optional(),
  }),
]);
export type ResolveResponseItem = z.infer<typeof ResolveResponseItem>;

/** POST /v1/resolve answer, one item per requested identity, in request order. */
export const ResolveResponse = z.object({ items: z.array(ResolveResponseItem) });
export type ResolveResponse = z.infer<typeof ResolveResponse>;

/** The longest search query, in characters. */
export const SEARCH_MAX_QUERY = 256;

/** The longest `repo` filter: `owner/name`, GitHub's 39-character owners and 100-character names. */
export const SEARCH_MAX_REPO_FILTER = 140;

/** GET /search query string. */
export const SearchQuery = z.object({
  q: z.string().trim().min(1).max(SEARCH_MAX_QUERY),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(1024).optional(),
  source: z.enum(['gh', 'hub']).optional(),
  owner: z.string().max(100).optional(),
  repo: z.string().max(SEARCH_MAX_REPO_FILTER).optional(),
  namespace: z.string().max(100).optional(),
});
export type SearchQuery = z.infer<typeof SearchQuery>;

/** One search hit. */
export const SearchResult = z.object({
  identity: z.string(),
  reference: z.string(),
  name: z.string(),
  description: z.string(),
  source: z.enum(['gh', 'hub']),
  /** `owner/repo` for gh, `namespace/collection` for hub. */
  repository: z.string(),
  path: z.string(),
  revision: z.string(),
  popularity: z.number().int().nonnegative(),
  descriptionTokens: z.number().int().nonnegative(),
  flags: z.array(SafetyFlag),
});
export type SearchResult = z.infer<typeof SearchResult>;

/** GET /search answer. */
export const SearchResponse = z.object({
  results: z.array(SearchResult),
  nextCursor: z.string().nullable(),
  total: z.number().int().nonnegative().optional(),
});
export type SearchResponse = z.infer<typeof SearchResponse>;

/** Longest message `POST /v1/suggest` reads (SPEC 2.7), and the longest `GET /v1/suggest?q=` (a URL's worth). */
export const SUGGEST_MAX_MESSAGE = 8_000;
export const SUGGEST_MAX_QUERY = 2_000;

const EMPTY_MESSAGE = 'the message is empty';
const LIMIT_RANGE = 'limit must be a whole number from 1 to 10';
const LIMIT_DESCRIPTION =
  'How many skills at most (1-10, default 5); fewer, or none (abstained), when fewer fit';

/** How many suggestions (1-10, default 5): the checks of the body's number and the query string's. */
function suggestLimit<T extends z.ZodNumber | z.ZodCoercedNumber>(count: T) {
  return count
    .int(LIMIT_RANGE)
    .min(1, LIMIT_RANGE)
    .max(10, LIMIT_RANGE)
    .default(5)
    .describe(LIMIT_DESCRIPTION);
}

/** GET /v1/suggest query string. */
export const SuggestQuery = z.object({
  q: z
    .string()
    .trim()
    .min(1, EMPTY_MESSAGE)
    .max(
      SUGGEST_MAX_QUERY,
      `the message is longer than ${SUGGEST_MAX_QUERY.toLocaleString('en-US')} characters: send longer messages ` +
        `by POST {"message"} (up to ${SUGGEST_MAX_MESSAGE.toLocaleString('en-US')} characters)`,
    )
    .describe(
      `The message the user typed to their agent, as typed (up to ${SUGGEST_MAX_QUERY.toLocaleString('en-US')} ` +
        'characters; POST a longer one)',
    ),
  // Read as /search reads its limit (z.coerce: `0x5`, `1e1` and ` 3` are numbers to it too); `limit=` is 0.
  limit: suggestLimit(z.coerce.number({ error: LIMIT_RANGE })),
});
export type SuggestQuery = z.infer<typeof SuggestQuery>;

/** POST /v1/suggest body. */
export const SuggestBody = z.object({
  message: z
    .string()
    .trim()
    .min(1, EMPTY_MESSAGE)
    .max(
      SUGGEST_MAX_MESSAGE,
      `the message is longer than ${SUGGEST_MAX_MESSAGE.toLocaleString('en-US')} characters; shorten it`,
    )
    .describe(
      'The message the user typed to their agent, as typed: code blocks, logs, paths and quoted text included ' +
        `(the hub finds the need in them), up to ${SUGGEST_MAX_MESSAGE.toLocaleString('en-US')} characters`,
    ),
  limit: suggestLimit(z.number({ error: LIMIT_RANGE })),
});
export type SuggestBody = z.infer<typeof SuggestBody>;

/** What a suggestion adds to a search result (the core one here, the hub's own in its route schemas). */
export const SuggestFields = {
  /** Estimated probability that the skill helps with the message: the same meaning in every message. */
  score: z.number().min(0).max(1),
  /** The words of the message this skill answers. */
  matched: z.string(),
};

/**
 * The score under which a suggestion rarely helps: on the hub's judged messages (`npm run bench -- suggest`,
 * its score bands) results 2-5 scored under it were judged helpful about 6 times in 100. The prompt hook
 * leaves such suggestions out; `atskills suggest` and the web page list them apart, as less likely to help.
 */
export const UNLIKELY_SUGGESTION_BELOW = 0.1;

/** Splits suggestions (in the hub's order) into the likely to help and those scored under UNLIKELY_SUGGESTION_BELOW. */
export function byLikelihood<T extends { score: number }>(
  results: readonly T[],
): { likely: T[]; unlikely: T[] } {
  const likely: T[] = [];
  const unlikely: T[] = [];
  for (const r of results) (r.score < UNLIKELY_SUGGESTION_BELOW ? unlikely : likely).push(r);
  return { likely, unlikely };
}

/** One suggestion: a search result plus its calibrated score and the part of the message it answers. */
export const SuggestResult = SearchResult.extend(SuggestFields);
export type SuggestResult = z.infer<typeof SuggestResult>;

/** GET/POST /v1/suggest answer: `abstained` (with no results) when no skill fits well enough. */
export const SuggestResponse = z.object({
  results: z.array(SuggestResult),
  abstained: z.boolean(),
});
export type SuggestResponse = z.infer<typeof SuggestResponse>;

/** A warning about a published skill (the hub publishes it anyway), e.g. a look-alike name. */
export const PublishWarning = z.object({
  code: z.string(),
  message: z.string(),
  path: z.string().optional(),
});
export type PublishWarning = z.infer<typeof PublishWarning>;

/** PUT /v1/collections/<namespace>/<collection> answer (what `atskills publish` reads). */
export const PublishResponse = z.object({
  identity: z.string().describe('hub:<namespace>/<collection>'),
  revision: z.string().describe('sha256 of the collection manifest: the new (or unchanged) revision'),
  previousRevision: z.string().nullable(),
  unchanged: z.boolean().describe('true when the content equals the current revision (no new revision made)'),
  visibility: z.enum(['private', 'public']),
  // Optional so a client still reads the answer of a hub from before it was added.
  previousVisibility: z
    .enum(['private', 'public'])
    .nullable()
    .optional()
    .describe(
      'the visibility before this publish (null for a new or deleted collection); a publish of unchanged content still applies a different visibility',
    ),
  skills: z.array(z.string()).describe('identities of the published skills'),
  warnings: z.array(PublishWarning),
});
export type PublishResponse = z.infer<typeof PublishResponse>;
