import { createHash } from 'node:crypto';
import {
  type Database,
  listContainerSkills,
  listSkillContainers,
  type ReadScope,
  type SkillRow,
} from '@atskills/db';
import { decodeCursor, encodeCursor, ProtocolError } from '@atskills/protocol';
import { Meilisearch } from 'meilisearch';
import { menuRevision } from '../services/menu-revision.js';
import { type EmbeddingsClient, skillEmbeddingText, type VectorSearch } from '../suggest/embeddings.js';
import { repoFilter, type SearchEngine, type SearchFilters, type SearchHit } from './engine.js';
import { flagSummary } from './hits.js';
import { embedderDimensions, embedderSettings, hybridSearchBody, withVector } from './meili-vectors.js';
import { headingsOf } from './memory/skill-index.js';
import { planWords } from './relevance/analyze.js';
import stopWordList from './relevance/stop-words.json' with { type: 'json' };
import synonymData from './relevance/synonyms.json' with { type: 'json' };
import translationData from './relevance/translations.json' with { type: 'json' };

/** How to reach Meilisearch. */
export interface MeilisearchOptions {
  url: string;
  apiKey?: string;
  index: string;
  /** Per-request timeout (ms): a slow engine must fall back quickly rather than hang searches. */
  timeoutMs?: number;
  /**
   * The embeddings service of suggestions (EMBEDDINGS_URL): skill documents then carry its vectors under a
   * user-provided embedder, and `vectorSearch` answers suggestions' semantic lists by hybrid search.
   */
  embeddings?: EmbeddingsClient;
}

/** Milliseconds the embeddings service may take to embed the dimension probe while settings are applied. */
const PROBE_TIMEOUT_MS = 5_000;
/** How long the embedder's dimensions read from the index are trusted before being read again. */
const DIMENSIONS_TTL_MS = 60_000;
/**
 * How long vector searches are not tried after one failed: suggestions then take the vectors they hold at
 * once instead of waiting out a timeout per need while Meilisearch is down.
 */
const VECTOR_PAUSE_MS = 30_000;

/** A document of the Meilisearch index: a skill or a folder of skills (kind 'collection'). */
interface SkillDocument extends Omit<SearchHit, 'skillCount'> {
  id: string;
  skillCount: number;
  /** Lowercase `source:owner/container`, to replace one container's documents at once. */
  containerKey: string;
  /** Lowercase filters. */
  ownerKey: string;
  repoKey: string;
  namespace: string;
  visibility: 'public' | 'private';
  /** Namespaces that may read a private document ('*' for public ones). */
  readers: string[];
  headings: string;
  body: string;
}

/**
 * Meilisearch's synonym map from the shared lists: each phrase of a group maps to the others, and each
 * Chinese, Japanese or Korean word of the field to its English (one way, as the in-memory engine reads them).
 */
function meiliSynonyms(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const group of synonymData.groups) {
    for (const phrase of group) out[phrase] = group.filter((p) => p !== phrase);
  }
  for (const [english, phrases] of Object.entries(translationData.terms)) {
    for (const phrase of phrases) out[phrase] = [...new Set([...(out[phrase] ?? []), english])];
  }
  return out;
}

/**
 * Index settings, the same semantics as the in-memory engine: searchable name > description > headings >
 * body; the shared synonym and stop-word lists; one typo from 4 letters, two from 8; popularity only as
 * the last ranking rule; searches use matchingStrategy 'frequency' (relaxation: the most common words are
 * dropped first until something matches).
 */
export const MEILI_SETTINGS = {
  searchableAttributes: ['name', 'description', 'headings', 'body'],
  synonyms: meiliSynonyms(),
  stopWords: stopWordList.words,
  filterableAttributes: [
    'kind',
    'source',
    'ownerKey',
    'repoKey',
    'namespace',
    'visibility',
    'readers',
    'containerKey',
  ],
  sortableAttributes: ['stars'],
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'exactness', 'stars:desc'],
  typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 4, twoTypos: 8 } },
  displayedAttributes: ['*'],
};

// Meilisearch document ids allow [A-Za-z0-9_-] only; identities hold any character, so hash them.
function documentId(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 40);
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function containerKey(row: Pick<SkillRow, 'source' | 'owner' | 'container'>): string {
  return `${row.source}:${row.owner}/${row.container}`.toLowerCase();
}

function skillDocument(row: SkillRow): SkillDocument {
  return {
    id: documentId(row.identity),
    kind: 'skill',
    identity: row.identity,
    name: row.name,
    description: row.description,
    headings: headingsOf(row.body),
    body: row.body.slice(0, 100_000),
    source: row.source as 'gh' | 'hub',
    owner: row.owner,
    container: row.container,
    path: row.path,
    revision: row.revision,
    stars: row.stars,
    descriptionTokens: row.descriptionTokens,
    bodyTokens: row.bodyTokens,
    warnings: row.warnings,
    flags: row.flags.map(flagSummary),
    skillCount: 0,
    containerKey: containerKey(row),
    ownerKey: row.owner.toLowerCase(),
    repoKey: row.container.toLowerCase(),
    namespace: row.source === 'hub' ? row.owner : '',
    visibility: row.visibility === 'private' ? 'private' : 'public',
    readers: row.visibility === 'private' ? [row.owner.toLowerCase()] : ['*'],
  };
}

/** The folder documents of one container: every folder holding at least two skills (as search does). */
function folderDocuments(rows: SkillRow[]): SkillDocument[] {
  const folders = new Map<string, SkillRow[]>();
  for (const row of rows) {
    const segments = row.path === '' ? [] : row.path.split('/');
    for (let n = 0; n < segments.length; n++) {
      const folder = segments.slice(0, n).join('/');
      const list = folders.get(folder) ?? [];
      list.push(row);
      folders.set(folder, list);
    }
  }
  const docs: SkillDocument[] = [];
  for (const [folder, members] of folders) {
    if (members.length < 2) continue;
    const first = members[0]!;
    const identity = `${first.source}:${first.owner}/${first.container}${folder ? `/${folder}` : ''}`;
    // A folder is as visible as its container; a private member makes the whole folder private.
    const isPrivate = members.some((m) => m.visibility === 'private');
    docs.push({
      ...skillDocument(first),
      id: documentId(identity),
      kind: 'collection',
      identity,
      name: folder === '' ? first.container : folder.slice(folder.lastIndexOf('/') + 1),
      description: `${members.length} skills`,
      headings: '',
      body: '',
      path: folder,
      revision: menuRevision(members),
      stars: Math.max(...members.map((m) => m.stars)),
      descriptionTokens: 0,
      bodyTokens: 0,
      warnings: [],
      flags: [],
      skillCount: members.length,
      visibility: isPrivate ? 'private' : 'public',
      readers: isPrivate ? [first.owner.toLowerCase()] : ['*'],
    });
  }
  return docs;
}

function filterExpression(filters: SearchFilters, viewer: ReadScope): string[] {
  const parts: string[] = [];
  if (!viewer.isAdmin) {
    const readable = viewer.readableNamespaces.map((n) => quote(n.toLowerCase()));
    parts.push(
      readable.length
        ? `(visibility = "public" OR readers IN [${readable.join(', ')}])`
        : 'visibility = "public"',
    );
  }
  if (filters.source) parts.push(`source = ${quote(filters.source)}`);
  if (filters.owner) parts.push(`ownerKey = ${quote(filters.owner.toLowerCase())}`);
  if (filters.repo) {
    const { owner, name } = repoFilter(filters.repo);
    parts.push(`repoKey = ${quote(name.toLowerCase())}`);
    if (owner !== undefined) parts.push(`ownerKey = ${quote(owner.toLowerCase())}`);
  }
  if (filters.namespace) parts.push(`namespace = ${quote(filters.namespace.toLowerCase())}`);
  return parts;
}

// Meilisearch has no keyset pagination. The cursor records the offset and the last identity served; the
// next page re-reads a window around that offset and resumes right after that identity, so rows inserted
// or removed before it between pages cause neither duplicates nor gaps (as long as it moved less than
// the window).
const WINDOW = 50;

/** The Meilisearch engine (used when MEILI_URL is set), kept in sync from Postgres. */
export function createMeilisearchEngine(
  db: Database,
  options: MeilisearchOptions,
): SearchEngine & {
  /** Applies the index settings (idempotent). */
  configure(): Promise<void>;
  /** Rebuilds the whole index from Postgres: settings, then every container's documents. */
  rebuild(): Promise<{ documents: number }>;
  /** Skills nearest a vector by hybrid search; null without an embeddings service or a vector-ready index. */
  vectorSearch: VectorSearch;
} {
  const client = new Meilisearch({
    host: options.url,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    timeout: options.timeoutMs ?? 2_000,
  });
  const index = client.index<SkillDocument>(options.index);
  // Settings are applied once per process before the first write (filters on containerKey/id need them).
  let configured: Promise<void> | undefined;
  const ensureConfigured = () => {
    configured ??= engine.configure().catch((err: unknown) => {
      configured = undefined;
      throw err;
    });
    return configured;
  };

  const embedder = options.embeddings;
  /** The embedder's dimensions this process writes with (known once settings are applied). */
  let writeDimensions: number | null = null;
  /** The embedder's dimensions read from the index (searching processes may never apply settings). */
  let readDimensions: { value: number | null; at: number } | undefined;
  let vectorsPausedUntil = 0;
  const indexDimensions = async (): Promise<number | null> => {
    if (writeDimensions !== null) return writeDimensions;
    if (!readDimensions || Date.now() - readDimensions.at > DIMENSIONS_TTL_MS) {
      readDimensions = { value: embedderDimensions(await index.getSettings()), at: Date.now() };
    }
    return readDimensions.value;
  };

  /** The documents with their vectors; without the service's answer they go without (never a stale vector). */
  async function vectorised(docs: SkillDocument[]): Promise<SkillDocument[]> {
    const dims = writeDimensions;
    if (!embedder || dims === null) return docs;
    const skills = docs.filter((d) => d.kind === 'skill');
    let got: Float32Array[] = [];
    try {
      got = await embedder.embed(skills.map((d) => skillEmbeddingText(d, d.headings)));
    } catch {
      return docs;
    }
    const byId = new Map(skills.map((d, i) => [d.id, got[i]]));
    return docs.map((d) => withVector(d, byId.get(d.id), dims));
  }

  async function syncContainer(loc: {
    source: 'gh' | 'hub';
    owner: string;
    container: string;
  }): Promise<number> {
    await ensureConfigured();
    const rows = (await listContainerSkills(db, loc)).filter((r) => r.parseError === null);
    const docs = await vectorised([...rows.map(skillDocument), ...folderDocuments(rows)]);
    const key = containerKey({ ...loc });
    // Replace the container's documents: drop what is no longer there, then upsert the rest.
    const keep = docs.map((d) => quote(d.id));
    const stale = keep.length
      ? `containerKey = ${quote(key)} AND NOT id IN [${keep.join(', ')}]`
      : `containerKey = ${quote(key)}`;
    await index.deleteDocuments({ filter: stale }).waitTask();
    if (docs.length) await index.addDocuments(docs, { primaryKey: 'id' }).waitTask();
    return docs.length;
  }

  const engine = {
    name: 'meilisearch',
    async configure() {
      // Creating an index that exists fails as a task, not as a call; the settings update is what matters.
      await client.createIndex(options.index, { primaryKey: 'id' }).waitTask();
      // The embedder's dimensions are the service's: one probe text tells them. A service that is down only
      // leaves the documents without vectors (the settings never drop an embedder the index has).
      let dims: number | null = null;
      if (embedder) {
        const probe = await embedder
          .embed(['skill'], { timeoutMs: PROBE_TIMEOUT_MS, attempts: 1 })
          .catch(() => null);
        dims = probe?.[0]?.length || null;
      }
      const settings = dims ? { ...MEILI_SETTINGS, ...embedderSettings(dims) } : MEILI_SETTINGS;
      const task = await index.updateSettings(settings).waitTask();
      if (task.status === 'failed')
        throw new Error(`meilisearch settings: ${task.error?.message ?? 'failed'}`);
      writeDimensions = dims;
    },
    async rebuild() {
      await ensureConfigured();
      await index.deleteAllDocuments().waitTask();
      let documents = 0;
      for (const loc of await listSkillContainers(db)) documents += await syncContainer(loc);
      return { documents };
    },
    async search(query: string, filters: SearchFilters, viewer: ReadScope, limit: number, cursor?: string) {
      let offset = 0;
      let lastIdentity: string | undefined;
      if (cursor) {
        const pos = readMeiliCursor(cursor);
        offset = pos.offset;
        lastIdentity = pos.identity;
      }
      const start = Math.max(0, offset - WINDOW);
      const res = await index.search(query.replace(/[\u0000-\u001f]/g, ' '), {
        filter: filterExpression(filters, viewer),
        matchingStrategy: 'frequency',
        offset: start,
        limit: limit + (offset - start) + WINDOW + 1,
      });
      let hits = res.hits as unknown as SkillDocument[];
      let resumeAt = offset - start;
      if (lastIdentity !== undefined) {
        const i = hits.findIndex((h) => h.identity === lastIdentity);
        if (i >= 0) resumeAt = i + 1;
      }
      hits = hits.slice(resumeAt);
      const page = hits.slice(0, limit);
      const last = page[page.length - 1];
      return {
        hits: page.map(toHit),
        nextCursor:
          hits.length > limit && last
            ? encodeMeiliCursor({ offset: start + resumeAt + page.length, identity: last.identity })
            : null,
        engine: { name: 'meilisearch' },
        ignored: planWords(query).ignored,
      };
    },
    async vectorSearch(vector: Float32Array, viewer: ReadScope, depth: number) {
      if (!embedder || Date.now() < vectorsPausedUntil) return null;
      try {
        const dims = await indexDimensions();
        if (dims !== vector.length) return null;
        const res = await index.search(null, hybridSearchBody(vector, filterExpression({}, viewer), depth));
        return (res.hits as unknown as Pick<SkillDocument, 'identity'>[]).map((h) => h.identity);
      } catch (err) {
        vectorsPausedUntil = Date.now() + VECTOR_PAUSE_MS;
        throw err;
      }
    },
    async index(identities: string[]) {
      for (const loc of await listSkillContainers(db, identities)) await syncContainer(loc);
    },
    async remove(identities: string[]) {
      if (identities.length === 0) return;
      await index.deleteDocuments(identities.map(documentId)).waitTask();
      // Folder documents of their containers change too.
      for (const loc of await listSkillContainers(db, identities)) await syncContainer(loc);
    },
    async health() {
      try {
        await client.health();
        return { ok: true };
      } catch (err) {
        return { ok: false, detail: (err as Error).message };
      }
    },
  };
  return engine;
}

function toHit(doc: SkillDocument): SearchHit {
  const hit: SearchHit = {
    kind: doc.kind,
    identity: doc.identity,
    name: doc.name,
    description: doc.description,
    source: doc.source,
    owner: doc.owner,
    container: doc.container,
    path: doc.path,
    revision: doc.revision,
    stars: doc.stars,
    descriptionTokens: doc.descriptionTokens,
    bodyTokens: doc.bodyTokens,
    warnings: doc.warnings,
    flags: doc.flags,
  };
  if (doc.kind === 'collection') hit.skillCount = doc.skillCount;
  return hit;
}

function encodeMeiliCursor(pos: { offset: number; identity: string }): string {
  return encodeCursor({ e: 'meili', o: pos.offset, k: pos.identity });
}

function readMeiliCursor(cursor: string): { offset: number; identity: string } {
  const obj = decodeCursor(cursor);
  if (obj.e === 'meili' && Number.isInteger(obj.o) && (obj.o as number) >= 0 && typeof obj.k === 'string') {
    return { offset: obj.o as number, identity: obj.k };
  }
  throw new ProtocolError('bad-cursor', 'The cursor is not a search cursor of this engine');
}
