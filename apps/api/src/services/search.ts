import { type Database, type ReadScope, type SkillUses, usesOfIdentities } from '@atskills/db';
import { activeFlagCodes, formatReference, refusalLine, refusingVerdict } from '@atskills/protocol';
import { SearchHitResponse, SearchPageResponse } from '../schemas.js';
import type { EngineAnswer, SearchEngine, SearchFilters, SearchHit } from '../search/engine.js';
import { compileSerializer } from '../serializer.js';
import { wireFlag } from './flags.js';

/** What a search asks: the validated query string of GET /search. */
export interface SearchRequest {
  q: string;
  limit: number;
  cursor?: string | undefined;
  filters: SearchFilters;
}

/** A page of results, before its wire shape: the engine's hits with their uses, plus the engine that answered. */
export interface SearchOutcome {
  hits: SearchHit[];
  /** Uses of the skill hits (read here when the engine does not hold them). */
  uses: ReadonlyMap<string, SkillUses>;
  nextCursor: string | null;
  corrected?: Record<string, string>;
  ignored?: string[];
  /** The engine that answered (sent as X-Search-Engine: engineHeader). */
  engine: EngineAnswer;
}

const NO_USES: SkillUses = Object.freeze({ week: 0, total: 0 });

/** A hit in the wire shape: a paste-ready reference, costs, flags, and a skill's uses. */
export function searchHitResponse(hit: SearchHit, uses?: SkillUses): SearchHitResponse {
  const flags = hit.flags.map((f) => wireFlag(f));
  // A skill judged malicious is listed by its identity (so its refusal can name it), with none of its own
  // text: its description is the refusal, on REST as on MCP and in menus (SPEC 2.8).
  const verdict = refusingVerdict(activeFlagCodes(flags));
  const response: SearchHitResponse = {
    kind: hit.kind,
    identity: hit.identity,
    reference: hit.reference ?? formatReference({ identity: hit.identity }),
    name: verdict ? '' : hit.name,
    description: verdict ? refusalLine(hit.identity, verdict) : hit.description,
    source: hit.source,
    repository: `${hit.owner}/${hit.container}`,
    path: hit.path,
    revision: hit.revision,
    popularity: Math.max(0, hit.stars),
    stars: Math.max(0, hit.stars),
    descriptionTokens: hit.descriptionTokens,
    bodyTokens: hit.bodyTokens,
    warnings: hit.warnings,
    flags,
    ...(hit.kind === 'collection' ? { skillCount: hit.skillCount ?? 0 } : {}),
  };
  if (hit.kind === 'skill') response.uses = uses ?? hit.uses ?? NO_USES;
  return response;
}

/** Searches skills and collections for a viewer (used by GET /search, the web page and MCP). */
export async function searchSkills(
  engine: SearchEngine,
  viewer: ReadScope,
  request: SearchRequest,
  db?: Database,
): Promise<SearchOutcome> {
  const page = await engine.search(request.q.trim(), request.filters, viewer, request.limit, request.cursor);
  const skills = page.hits.filter((h) => h.kind === 'skill' && h.uses === undefined);
  // The hits are already the viewer's: a private skill's uses reach only those who may read it. An engine
  // holding uses (the in-memory one) saves the query.
  const uses =
    db && skills.length > 0
      ? await usesOfIdentities(
          db,
          skills.map((h) => h.identity),
          new Date().toISOString().slice(0, 10),
        )
      : new Map<string, SkillUses>();
  return {
    hits: page.hits,
    uses,
    nextCursor: page.nextCursor,
    ...(page.corrected && Object.keys(page.corrected).length > 0 ? { corrected: page.corrected } : {}),
    ...(page.ignored && page.ignored.length > 0 ? { ignored: page.ignored } : {}),
    engine: page.engine,
  };
}

/** The page in its wire shape (for the web page and MCP; GET /search sends searchPageJson). */
export function searchPageResponse(outcome: SearchOutcome): SearchPageResponse {
  return {
    results: outcome.hits.map((hit) => searchHitResponse(hit, outcome.uses.get(hit.identity))),
    nextCursor: outcome.nextCursor,
    ...(outcome.corrected ? { corrected: outcome.corrected } : {}),
    ...(outcome.ignored ? { ignored: outcome.ignored } : {}),
  };
}

const serializeHit = compileSerializer(SearchHitResponse);
const serializePage = compileSerializer(SearchPageResponse);
/**
 * JSON of a hit whose uses the engine holds, by hit: an engine that keeps its hits (the in-memory one, which
 * replaces a hit object whenever it changes) has each one serialized once instead of on every answer, which
 * was a fifth of a search's CPU in the API.
 */
const heldHitJson = new WeakMap<SearchHit, string>();
const RESULTS_OPEN = '{"results":[';

/** The JSON body of GET /search: the same bytes as the route's schema would write for searchPageResponse. */
export function searchPageJson(outcome: SearchOutcome): string {
  const hits = outcome.hits.map((hit) => {
    const uses = outcome.uses.get(hit.identity);
    if (uses !== undefined || (hit.kind === 'skill' && hit.uses === undefined)) {
      return serializeHit(searchHitResponse(hit, uses));
    }
    let json = heldHitJson.get(hit);
    if (json === undefined) {
      json = serializeHit(searchHitResponse(hit));
      // fast-json-stringify's string is a rope of a few hundred pieces, walked again by every join: a flat
      // copy is kept (this took a page's JSON from ~11 to ~3 µs).
      json = Buffer.from(json).toString();
      heldHitJson.set(hit, json);
    }
    return json;
  });
  const rest = serializePage(searchPageResponse({ ...outcome, hits: [] }));
  // "results" is the schema's first property: the hits go between its brackets.
  if (!rest.startsWith(`${RESULTS_OPEN}]`)) return serializePage(searchPageResponse(outcome));
  return `${RESULTS_OPEN}${hits.join(',')}${rest.slice(RESULTS_OPEN.length)}`;
}
