import type { ReadScope } from '@atskills/db';
import type { CandidateDraw } from './tuning.js';

/** Filters of GET /search. */
export interface SearchFilters {
  source?: 'gh' | 'hub';
  /** GitHub owner (gh) - also matches a hub namespace when `source` is not set. */
  owner?: string;
  /**
   * GitHub repository name (gh) or collection name (hub), alone or as `owner/name` (how answers show it in
   * `repository`); compared without case, as GitHub compares names.
   */
  repo?: string;
  /** Hub namespace. */
  namespace?: string;
}

/**
 * The `repo` filter read as an owner and a name: `owner/name` gives both, a bare name only the name. Answers
 * show a repository as `owner/name`, and a filter of that text matched nothing (containers were compared to
 * the whole of it).
 */
export function repoFilter(repo: string): { owner?: string; name: string } {
  const slash = repo.indexOf('/');
  return slash < 0 ? { name: repo } : { owner: repo.slice(0, slash), name: repo.slice(slash + 1) };
}

/**
 * `filters` with an `owner/name` repo split into the owner and repo filters, or undefined when nothing can
 * pass them (that owner differs from the owner filter's).
 */
export function splitRepoFilter(filters: SearchFilters): SearchFilters | undefined {
  if (!filters.repo) return filters;
  const { owner, name } = repoFilter(filters.repo);
  if (owner === undefined) return filters;
  if (filters.owner !== undefined && filters.owner.toLowerCase() !== owner.toLowerCase()) return undefined;
  return { ...filters, owner, repo: name };
}

/** A search hit: a skill, or a collection (a folder holding several skills). */
export interface SearchHit {
  kind: 'skill' | 'collection';
  identity: string;
  name: string;
  description: string;
  source: 'gh' | 'hub';
  /** gh: owner; hub: namespace. */
  owner: string;
  /** gh: repository name; hub: collection name. */
  container: string;
  /** Folder path inside the repository or collection ('' for its root). */
  path: string;
  revision: string;
  stars: number;
  descriptionTokens: number;
  bodyTokens: number;
  warnings: string[];
  flags: {
    rule: string;
    severity: string;
    file: string;
    line: number;
    message: string;
    suppressedBy?: number;
  }[];
  /** Collections only: how many skills the folder holds. */
  skillCount?: number;
  /** Weekly and all-time uses, when the engine holds them (else the search service reads them). */
  uses?: { week: number; total: number };
  /** The paste-ready reference, when the engine keeps it (a hit held in memory formats it once). */
  reference?: string;
}

/** Which engine answered a search, and why, when it answered in place of the configured one. */
export interface EngineAnswer {
  /** The engine that ranked the page: `memory`, `postgres`, `meilisearch`. */
  name: string;
  /**
   * Set when `name` answered for the configured engine: `outage` when that one failed, `building` while the
   * in-memory index is still being built.
   */
  fallback?: 'outage' | 'building';
}

/**
 * The X-Search-Engine header of an answer: the name, then `; fallback` or `; index building` (the format the
 * header has always had, kept for clients and dashboards that read it).
 */
export function engineHeader(engine: EngineAnswer): string {
  if (engine.fallback === 'outage') return `${engine.name}; fallback`;
  if (engine.fallback === 'building') return `${engine.name}; index building`;
  return engine.name;
}

/** How a caller uses a page (engines may ignore it). */
export interface SearchOptions {
  /** The caller reads one page and never asks for the next: an engine may leave `nextCursor` null. */
  noCursor?: boolean;
  /**
   * How many candidates the in-memory engine's lists draw (SEARCH_DRAW by default): a caller that reads
   * only the first few dozen hits of a long query (suggestions) may draw fewer.
   */
  draw?: CandidateDraw;
}

/** One page of results. */
export interface SearchPage {
  hits: SearchHit[];
  /** Opaque cursor of the next page, null on the last one. */
  nextCursor: string | null;
  /** The engine that answered, and why, when it answered for another. */
  engine: EngineAnswer;
  /** Query words read as another word of the index (typo -> correction), when the engine corrects. */
  corrected?: Record<string, string>;
  /** Query words that took no part (stop words, words no skill holds), when the engine says so. */
  ignored?: string[];
}

/** What a search engine reports about itself (readiness checks, /v1/stats). */
export interface EngineHealth {
  ok: boolean;
  detail?: string;
}

/**
 * A full-text engine over the skills index. Every engine obeys the same contract (see
 * test/search-contract.test.ts): ranking, filters, viewer visibility and cursor pagination.
 */
export interface SearchEngine {
  readonly name: string;
  /** One page of results for `query`, private rows filtered by `viewer`. Throws ProtocolError 'bad-cursor'. */
  search(
    query: string,
    filters: SearchFilters,
    viewer: ReadScope,
    limit: number,
    cursor: string | undefined,
    options?: SearchOptions,
  ): Promise<SearchPage>;
  /** Brings these identities up to date in the engine (after a crawl or publish upserted them). */
  index(identities: string[]): Promise<void>;
  /** Drops these identities from the engine (gone upstream, deleted). */
  remove(identities: string[]): Promise<void>;
  health(): Promise<EngineHealth>;
  close?(): Promise<void>;
}
