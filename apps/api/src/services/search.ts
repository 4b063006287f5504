import { type Database, type ReadScope, type SkillUses, usesOfIdentities } from '@atskills/db';
import { formatReference } from '@atskills/protocol';
import type { SearchHitResponse, SearchPageResponse } from '../schemas.js';
import type { SearchEngine, SearchFilters, SearchHit } from '../search/engine.js';
import { wireFlag } from './flags.js';

/** What a search asks: the validated query string of GET /search. */
export interface SearchRequest {
  q: string;
  limit: number;
  cursor?: string | undefined;
  filters: SearchFilters;
}

/** A page of results in the wire shape, plus the engine that answered (for X-Search-Engine). */
export interface SearchOutcome {
  page: SearchPageResponse;
  engine: string;
}

/** A hit in the wire shape: a paste-ready reference, costs, flags. */
export function searchHitResponse(hit: SearchHit): SearchHitResponse {
  return {
    kind: hit.kind,
    identity: hit.identity,
    reference: hit.reference ?? formatReference({ identity: hit.identity }),
    name: hit.name,
    description: hit.description,
    source: hit.source,
    repository: `${hit.owner}/${hit.container}`,
    path: hit.path,
    revision: hit.revision,
    popularity: Math.max(0, hit.stars),
    stars: Math.max(0, hit.stars),
    descriptionTokens: hit.descriptionTokens,
    bodyTokens: hit.bodyTokens,
    warnings: hit.warnings,
    flags: hit.flags.map((f) => wireFlag(f)),
    ...(hit.kind === 'collection' ? { skillCount: hit.skillCount ?? 0 } : {}),
  };
}

/** Searches skills and collections for a viewer (used by GET /search and the web page). */
export async function searchSkills(
  engine: SearchEngine,
  viewer: ReadScope,
  request: SearchRequest,
  db?: Database,
): Promise<SearchOutcome> {
  const page = await engine.search(request.q.trim(), request.filters, viewer, request.limit, request.cursor);
  const skills = page.hits.filter((h) => h.kind === 'skill');
  // The hits are already the viewer's: a private skill's uses reach only those who may read it. An engine
  // holding uses (the in-memory one) saves the query.
  const held = skills.every((h) => h.uses !== undefined);
  const uses =
    db && !held
      ? await usesOfIdentities(
          db,
          skills.map((h) => h.identity),
          new Date().toISOString().slice(0, 10),
        )
      : new Map<string, SkillUses>(skills.flatMap((h) => (h.uses ? [[h.identity, h.uses] as const] : [])));
  return {
    page: {
      results: page.hits.map((hit) => {
        const response = searchHitResponse(hit);
        if (hit.kind !== 'skill') return response;
        return { ...response, uses: uses.get(hit.identity) ?? { week: 0, total: 0 } };
      }),
      nextCursor: page.nextCursor,
      ...(page.corrected && Object.keys(page.corrected).length > 0 ? { corrected: page.corrected } : {}),
      ...(page.ignored && page.ignored.length > 0 ? { ignored: page.ignored } : {}),
    },
    engine: page.engine,
  };
}
