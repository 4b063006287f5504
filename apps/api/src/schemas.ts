import {
  MenuResponse,
  ProblemDetails,
  ResolveRequest,
  ResolveResponse,
  SafetyFlag,
  SearchQuery,
  SearchResult,
  SkillResponse,
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
});
export type SkillView = z.infer<typeof SkillView>;

/** GET /v1/skills/<identity>: a skill or a menu. */
export const SkillOrMenu = z.union([SkillView, MenuResponse]);

/** `?rev=` of the resolution routes. */
export const RevisionQuery = z.object({
  rev: z.string().min(1).max(200).optional().describe('Pin an exact revision (immutable answer).'),
});

/** `?rev=&path=` of GET /v1/files. */
export const FileQuery = RevisionQuery.extend({
  path: z.string().min(1).max(1024).describe('File path within the skill folder, e.g. scripts/run.sh'),
});

/** GET /v1/repos/<owner>/<repo>: a repository and its latest crawl report. */
export const RepositoryReport = z.object({
  owner: z.string(),
  name: z.string(),
  identity: z.string(),
  defaultBranch: z.string().nullable(),
  headRevision: z.string().nullable(),
  description: z.string().nullable(),
  stars: z.number().int(),
  license: z.string().nullable(),
  archived: z.boolean(),
  gone: z.boolean(),
  skills: z.number().int().nonnegative(),
  lastCrawledAt: z.string().nullable(),
  lastCrawlOutcome: z.string().nullable(),
  lastCrawlError: z.string().nullable(),
  report: z
    .object({
      outcome: z.string(),
      headRevision: z.string().nullable(),
      skillsFound: z.number().int(),
      skillsAdded: z.number().int(),
      skillsUpdated: z.number().int(),
      skillsRemoved: z.number().int(),
      warnings: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })),
      errors: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })),
      durationMs: z.number().int(),
      startedAt: z.string(),
      finishedAt: z.string().nullable(),
    })
    .nullable(),
});
export type RepositoryReport = z.infer<typeof RepositoryReport>;

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

/** The problem responses a route documents (one schema for every error status). */
export function problems(...statuses: number[]): Record<number, typeof ProblemDetails> {
  return Object.fromEntries(statuses.map((s) => [s, ProblemDetails]));
}
