import {
  MenuResponse,
  ProblemDetails,
  ResolveRequest,
  ResolveResponse,
  SafetyFlag,
  SearchQuery,
  SearchResult,
  SkillResponse,
  SuggestBody,
  SuggestFields,
  SuggestQuery,
} from '@atskills/protocol';
import { z } from 'zod';

// Route schemas of the hub. The wire shapes shared with clients come from @atskills/protocol (http.ts);
// what only the hub adds (kind, skill counts, token costs...) extends them here, so a client parsing the
// core shapes keeps working.

export {
  MenuResponse,
  ProblemDetails,
  ResolveRequest,
  ResolveResponse,
  SafetyFlag,
  SearchQuery,
  SkillResponse,
  SuggestBody,
  SuggestQuery,
};

/** Distinct clients that resolved a skill: in the last 7 days (today included) and all time (/about/metrics). */
export const SkillUsesResponse = z.object({
  week: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
});

/** GET /search result: the core SearchResult plus kind, collection size and costs. */
export const SearchHitResponse = SearchResult.extend({
  kind: z.enum(['skill', 'collection']),
  /** Collections only: how many skills the folder holds. */
  skillCount: z.number().int().nonnegative().optional(),
  stars: z.number().int().nonnegative(),
  /** Skills only: how many clients resolved it (/about/metrics). */
  uses: SkillUsesResponse.optional(),
  bodyTokens: z.number().int().nonnegative(),
  warnings: z.array(z.string()),
});
export type SearchHitResponse = z.infer<typeof SearchHitResponse>;

/** GET /search answer. */
export const SearchPageResponse = z.object({
  results: z.array(SearchHitResponse),
  nextCursor: z.string().nullable(),
  /** Query words read as another word of the index: `{ "kubernets": "kubernetes" }`. */
  corrected: z.record(z.string(), z.string()).optional(),
  /** Query words that took no part: stop words, words no skill holds, words past the 16th. */
  ignored: z.array(z.string()).optional(),
});
export type SearchPageResponse = z.infer<typeof SearchPageResponse>;

/** One /v1/suggest result: what a search result carries, plus its calibrated score and the words it answers. */
export const SuggestHitResponse = SearchHitResponse.extend(SuggestFields);
export type SuggestHitResponse = z.infer<typeof SuggestHitResponse>;

/** GET/POST /v1/suggest answer (SPEC 2.7). */
export const SuggestPageResponse = z.object({
  results: z.array(SuggestHitResponse),
  /** True (with no results) when no skill fits the message well enough. */
  abstained: z.boolean(),
});
export type SuggestPageResponse = z.infer<typeof SuggestPageResponse>;

/** GET /v1/skills/<identity> for a skill: the core SkillResponse plus where it lives and its costs. */
export const SkillView = SkillResponse.extend({
  reference: z.string(),
  source: z.enum(['gh', 'hub']),
  repository: z.string(),
  path: z.string(),
  stars: z.number().int().nonnegative(),
  uses: SkillUsesResponse,
  descriptionTokens: z.number().int().nonnegative(),
  bodyTokens: z.number().int().nonnegative(),
  lastSeen: z.string(),
  filesLeftOut: z
    .array(z.object({ path: z.string(), reason: z.string() }))
    .optional()
    .describe(
      'Files of the folder the hub did not download (over CRAWL_MAX_FILE_BYTES): not in `files` nor the archive; the warnings then hold `files-left-out`',
    ),
});
export type SkillView = z.infer<typeof SkillView>;

/** GET /v1/skills/<identity> when it is a folder: the core menu, each row with its skill's verdict. */
export const HubMenuResponse = MenuResponse;
export type HubMenuResponse = z.infer<typeof HubMenuResponse>;

/** GET /v1/skills/<identity>: a skill or a menu. */
export const SkillOrMenu = z.union([SkillView, HubMenuResponse]);

/** `?rev=` of the resolution routes. */
export const RevisionQuery = z.object({
  rev: z.string().min(1).max(200).optional().describe('Pin an exact revision (immutable answer).'),
});

/** `?rev=&path=` of GET /v1/files. */
export const FileQuery = RevisionQuery.extend({
  path: z.string().min(1).max(1024).describe('File path within the skill folder, e.g. scripts/run.sh'),
});

/** One reason a skill of a repository is not listed (SPEC 2.6). */
export const RepositoryProblem = z.object({
  path: z.string().describe('the file or folder, relative to the repository root'),
  code: z
    .string()
    .describe('stable: invalid-yaml, missing-name, too-large, over-cap, skill-file-symlink, ...'),
  message: z.string(),
  line: z.number().int().positive().optional().describe('1-based line, when the problem has one'),
});

const ReportEntry = z.object({
  path: z.string(),
  code: z.string(),
  message: z.string(),
  line: z.number().int().optional(),
});

/** GET /v1/repos/<owner>/<repo>: the repository's index status, skills and problems, and its latest crawl report. */
export const RepositoryReport = z.object({
  owner: z.string(),
  name: z.string(),
  identity: z.string(),
  status: z.enum(['queued', 'crawling', 'indexed', 'failed', 'not-indexed']),
  headRevision: z.string().nullable(),
  lastCrawledAt: z.string().nullable().describe('ISO time of the last finished crawl'),
  skills: z.array(z.string()).describe('identities of the listed skills'),
  problems: z.array(RepositoryProblem),
  request: z
    .object({ createdAt: z.string(), coalesced: z.number().int() })
    .nullable()
    .describe('the open index request, while one is queued or crawling'),
  defaultBranch: z.string().nullable(),
  description: z.string().nullable(),
  stars: z.number().int(),
  license: z.string().nullable(),
  archived: z.boolean(),
  gone: z.boolean(),
  lastCrawlOutcome: z.string().nullable(),
  report: z
    .object({
      outcome: z.string(),
      headRevision: z.string().nullable(),
      skillsFound: z.number().int(),
      skillsAdded: z.number().int(),
      skillsUpdated: z.number().int(),
      skillsRemoved: z.number().int(),
      warnings: z.array(ReportEntry),
      errors: z.array(ReportEntry),
      durationMs: z.number().int(),
      startedAt: z.string(),
      finishedAt: z.string().nullable(),
    })
    .nullable(),
});
export type RepositoryReport = z.infer<typeof RepositoryReport>;

/** POST /v1/index-requests body. */
export const IndexRequestBody = z.object({
  repo: z.string().max(300).describe('owner/name (also gh:owner/name or a github.com URL)'),
});

/** POST /v1/index-requests answer (202). */
export const IndexRequestAccepted = z.object({
  repo: z.string(),
  status: z.enum(['queued', 'crawling']),
  started: z.boolean().describe('false when the request joined one already open for the repository'),
  statusUrl: z.string(),
});

/** POST /v1/webhooks/github answer. */
export const WebhookAnswer = z.object({
  delivery: z.string(),
  event: z.string(),
  outcome: z.enum(['queued', 'applied', 'ignored', 'duplicate']),
  detail: z.string(),
  repository: z.string().optional(),
  statusUrl: z.string().optional(),
});

/** GET /v1/stats. */
export const StatsResponse = z.object({
  skills: z.number().int().nonnegative(),
  repositories: z.number().int().nonnegative(),
  collections: z.number().int().nonnegative(),
  gone: z.number().int().nonnegative(),
  searchEngine: z.string(),
  lastCrawl: z
    .object({
      id: z.number().int(),
      kind: z.string(),
      status: z.string(),
      startedAt: z.string(),
      finishedAt: z.string().nullable(),
    })
    .nullable(),
});
export type StatsResponse = z.infer<typeof StatsResponse>;

/** A short text on one line: no control characters (Postgres refuses NUL; the others are never meant). */
export function lineText(max: number, min = 0) {
  return z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'holds a control character');
}

/** A free text (a note): line breaks and tabs allowed, no other control character. */
export function noteText(max: number) {
  return z
    .string()
    .max(max)
    .refine(
      (s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s),
      'holds a control character (only tabs and line breaks are allowed)',
    );
}

/** A success answer of bytes (an archive, a file, a tarball): documented by the route's `produces`. */
export const RawBytes = z.any().describe('Raw bytes');

/** The problem responses a route documents (one schema for every error status). */
export function problems(...statuses: number[]): Record<number, typeof ProblemDetails> {
  return Object.fromEntries(statuses.map((s) => [s, ProblemDetails]));
}

/** The OpenAPI security scheme of hub tokens (`Authorization: Bearer`), named in components.securitySchemes. */
export const BEARER_SCHEME = 'bearerToken';

/**
 * The OpenAPI `security` of an operation that answers 401 without a token. Every other operation takes a
 * token optionally (the document's default): it widens what the caller may read.
 */
export const TOKEN_REQUIRED = [{ [BEARER_SCHEME]: [] }];
