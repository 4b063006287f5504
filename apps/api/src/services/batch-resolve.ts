import { type Database, findLiveSkillSummaries, type ReadScope } from '@atskills/db';
import type { ResolveRequest, ResolveResponse, ResolveResponseItem } from '@atskills/protocol';
import { isHttpProblem } from '../problems.js';
import { flagRules } from './flags.js';
import { movedGhIdentity } from './indexing/missing-gh.js';
import { canonicalIdentity } from './locate.js';
import { menuRevisionWithVerdicts, withMenuVerdicts } from './menu-verdicts.js';
import { pick } from './pick.js';
import { cacheKey, type ReadCache, scopeKey } from './read-cache.js';
import { resolveIdentity } from './resolve.js';

// Items are resolved a few at a time: one request may carry 128, and a burst of pool checkouts from a
// single request should not starve everyone else.
const CONCURRENCY = 4;

/** What a `changed` skill item carries besides its revision: enough to refresh a resident block. */
const CHANGED_FIELDS = ['name', 'description', 'frontmatter'] as const;

/** Answers one item: unchanged, changed (with frontmatter), gone, not-found, or an error with its code. */
async function resolveItem(
  db: Database,
  viewer: ReadScope,
  item: ResolveRequest['items'][number],
): Promise<ResolveResponseItem> {
  try {
    const resolved = await resolveIdentity(db, viewer, item.identity);
    if (resolved.kind === 'menu') {
      // A menu's revision covers its rows' verdicts, as GET /v1/skills answers it.
      const revision = menuRevisionWithVerdicts(
        resolved.revision,
        await withMenuVerdicts(db, viewer, resolved.items),
      );
      return item.revision === revision
        ? { identity: item.identity, status: 'unchanged', revision }
        : { identity: item.identity, status: 'changed', revision, kind: 'menu' };
    }
    const flags = { flags: flagRules(resolved.flags) };
    if (item.revision !== undefined && item.revision === resolved.revision) {
      return { identity: item.identity, status: 'unchanged', revision: resolved.revision, ...flags };
    }
    return {
      identity: item.identity,
      status: 'changed',
      revision: resolved.revision,
      kind: 'skill',
      ...pick(resolved, CHANGED_FIELDS),
      ...flags,
    };
  } catch (err) {
    if (!isHttpProblem(err)) throw err;
    if (err.code === 'not-found') {
      // As GET answers 301 for an identity whose repository was renamed, the batch names the new one.
      const moved = await movedGhIdentity(db, item.identity);
      return moved
        ? { identity: item.identity, status: 'moved', location: moved }
        : { identity: item.identity, status: 'not-found' };
    }
    if (err.code === 'gone') {
      const { lastRevision, lastSeen } = err.extensions as { lastRevision?: string; lastSeen?: string };
      return {
        identity: item.identity,
        status: 'gone',
        ...(lastRevision ? { lastRevision } : {}),
        ...(lastSeen ? { lastSeen } : {}),
      };
    }
    const reason = (err.extensions as { reason?: string }).reason;
    return {
      identity: item.identity,
      status: 'error',
      code: reason ? `${err.code}:${reason}` : err.code,
      ...(err.detail ? { detail: err.detail } : {}),
    };
  }
}

/**
 * POST /v1/resolve: every item answered in request order, in one round trip. With the read cache on, an
 * item whose held revision is the cached live revision is unchanged without a query (the revision probes
 * of GET /v1/skills fill and use the same entries).
 */
export async function resolveBatch(
  db: Database,
  viewer: ReadScope,
  request: ResolveRequest,
  cache?: ReadCache,
): Promise<ResolveResponse> {
  const out: ResolveResponseItem[] = new Array(request.items.length);
  const canonical = request.items.map((item) => canonicalIdentity(item.identity));
  const useCache = cache?.enabled === true;
  const scope = useCache ? scopeKey(viewer) : '';
  const pending: number[] = [];
  request.items.forEach((item, i) => {
    const located = canonical[i];
    const cached =
      useCache && located && item.revision !== undefined
        ? cache.getRevision(cacheKey(scope, located))
        : undefined;
    if (cached && cached.revision === item.revision) {
      // The cached entry holds the same flag codes as the X-Skill-Flags header it serves.
      out[i] = {
        identity: item.identity,
        status: 'unchanged',
        revision: cached.revision,
        flags: cached.flagRules,
      };
    } else pending.push(i);
  });
  if (pending.length === 0) return { items: out };
  // The common case, live skills, is answered from one query for the whole batch; menus, gone, unknown
  // and malformed identities take the full resolution below, one by one, as GET /v1/skills does.
  const generation = cache?.generation ?? 0;
  const live = await findLiveSkillSummaries(db, viewer, [
    ...new Set(pending.map((i) => canonical[i]).filter((c): c is string => c !== undefined)),
  ]);
  const byIdentity = new Map(live.map((row) => [row.identity, row]));
  const slow: number[] = [];
  pending.forEach((i) => {
    const item = request.items[i]!;
    const row = byIdentity.get(canonical[i] ?? '');
    if (!row) slow.push(i);
    else if (item.revision === row.revision) {
      const flags = flagRules(row.flags);
      if (useCache)
        cache.putRevision(
          cacheKey(scope, row.identity),
          { revision: row.revision, flagRules: flags },
          generation,
        );
      out[i] = { identity: item.identity, status: 'unchanged', revision: row.revision, flags };
    } else {
      out[i] = {
        identity: item.identity,
        status: 'changed',
        revision: row.revision,
        kind: 'skill',
        ...pick(row, CHANGED_FIELDS),
        flags: flagRules(row.flags),
      };
    }
  });
  let next = 0;
  async function worker() {
    while (next < slow.length) {
      const i = slow[next++]!;
      out[i] = await resolveItem(db, viewer, request.items[i]!);
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, slow.length) }, worker));
  return { items: out };
}
