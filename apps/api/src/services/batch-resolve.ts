import type { Database, ReadScope } from '@atskills/db';
import type { ResolveRequest, ResolveResponse, ResolveResponseItem } from '@atskills/protocol';
import { isHttpProblem } from '../problems.js';
import { resolveIdentity } from './resolve.js';

// Items are resolved a few at a time: one request may carry 128, and a burst of pool checkouts from a
// single request should not starve everyone else.
const CONCURRENCY = 4;

/** Answers one item: unchanged, changed (with frontmatter), gone, not-found, or an error with its code. */
async function resolveItem(
  db: Database,
  viewer: ReadScope,
  item: ResolveRequest['items'][number],
): Promise<ResolveResponseItem> {
  try {
    const resolved = await resolveIdentity(db, viewer, item.identity);
    if (item.revision !== undefined && item.revision === resolved.revision) {
      return { identity: item.identity, status: 'unchanged', revision: resolved.revision };
    }
    if (resolved.kind === 'menu') {
      return { identity: item.identity, status: 'changed', revision: resolved.revision, kind: 'menu' };
    }
    return {
      identity: item.identity,
      status: 'changed',
      revision: resolved.revision,
      kind: 'skill',
      name: resolved.name,
      description: resolved.description,
      frontmatter: resolved.frontmatter,
    };
  } catch (err) {
    if (!isHttpProblem(err)) throw err;
    if (err.code === 'not-found') return { identity: item.identity, status: 'not-found' };
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

/** POST /v1/resolve: every item answered in request order, in one round trip. */
export async function resolveBatch(
  db: Database,
  viewer: ReadScope,
  request: ResolveRequest,
): Promise<ResolveResponse> {
  const out: ResolveResponseItem[] = new Array(request.items.length);
  let next = 0;
  async function worker() {
    while (next < request.items.length) {
      const i = next++;
      out[i] = await resolveItem(db, viewer, request.items[i]!);
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, request.items.length) }, worker));
  return { items: out };
}
