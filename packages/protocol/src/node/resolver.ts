import { readFileSync } from 'node:fs';
import path from 'node:path';
import { splitFrontmatter } from '../frontmatter-split.js';
import { type Identity, parseIdentity, splitIdentityPrefix } from '../identity.js';
import { SKILL_FILE } from '../leaf-rule.js';
import type { MenuItem } from '../menu.js';
import { type CachedEntry, type CacheEntryMeta, SkillCache } from './cache.js';
import type { FetchedEntry, GitSource } from './git-source.js';
import type { HubSource } from './hub-source.js';
import type { LocalSkillProblem } from './local-check.js';
import { resolveLocal } from './local-source.js';
import { ResolveError } from './resolve-error.js';
import type { ClientSettings } from './settings.js';

/** Where an answer came from. */
export type Origin = 'local' | 'cache' | 'fetched';

interface ResolvedBase {
  identity: string;
  /** Upstream revision; `local` for the project's own files. */
  revision: string;
  /** True when served from the cache without a successful revision check. */
  stale: boolean;
  /** Why the answer is stale (the failed check's message). */
  staleReason?: string;
  origin: Origin;
  /** When the cached content was fetched (cloud answers only). */
  fetchedAt?: string;
}

/** A resolved skill: its folder (so the agent can open its other files) and its SKILL.md. */
export interface ResolvedSkill extends ResolvedBase {
  kind: 'skill';
  dir: string;
  name: string;
  description: string;
  body: string;
  /** A project skill's breaks of SPEC 1.1 (file and rule), so callers can warn; absent when valid or cloud. */
  problems?: LocalSkillProblem[];
}

/** A resolved folder without SKILL.md: one row per skill beneath it. */
export interface ResolvedMenu extends ResolvedBase {
  kind: 'menu';
  items: MenuItem[];
}

export type Resolved = ResolvedSkill | ResolvedMenu;

/** Options of one resolve. */
export interface ResolveOptions {
  /** The project root holding `.atskills/`. */
  projectDir: string;
  /** Never touch the network: serve the cache (marked stale) or fail with `offline`. */
  offline?: boolean;
  /** Skip the project's copy (a save must see upstream, not its own copy). */
  skipLocal?: boolean;
}

/**
 * Local first, then the validating cache with one revision probe per use (SPEC 1.4). The git and hub
 * sources are imported on first use, so a run that answers locally, or from the cache through one probe,
 * parses only what that path needs (the client's start-up, `npm run bench -- client`).
 */
export class Resolver {
  readonly cache: SkillCache;
  private gitSource?: Promise<GitSource>;
  private hubSource?: Promise<HubSource>;

  constructor(readonly settings: Readonly<ClientSettings>) {
    this.cache = new SkillCache(settings.cacheDir);
  }

  private git(): Promise<GitSource> {
    this.gitSource ??= import('./git-source.js').then((m) => new m.GitSource(this.settings, this.cache));
    return this.gitSource;
  }

  private hub(): Promise<HubSource> {
    this.hubSource ??= import('./hub-source.js').then((m) => new m.HubSource(this.settings, this.cache));
    return this.hubSource;
  }

  /** Resolves an identity (text is parsed and normalized first; throws IdentityError or ResolveError). */
  async resolve(identity: string | Identity, options: ResolveOptions): Promise<Resolved> {
    const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
    if (!options.skipLocal) {
      const local = await resolveLocal(id, options.projectDir);
      if (local?.kind === 'skill') {
        // Loaded here: the check parses YAML, which a cloud answer never needs.
        const { checkLocalSkill } = await import('./local-check.js');
        const problems = await checkLocalSkill(local.dir, options.projectDir);
        return {
          ...(await readSkill(local.dir, id.path)),
          identity: id.identity,
          revision: 'local',
          stale: false,
          origin: 'local',
          ...(problems.length > 0 ? { problems } : {}),
        };
      }
      if (local?.kind === 'menu')
        return {
          kind: 'menu',
          identity: id.identity,
          revision: 'local',
          stale: false,
          origin: 'local',
          items: local.items,
        };
    }
    if (id.source === 'local') {
      throw new ResolveError(
        'not-found',
        `No project skill at .atskills/${id.path} (a bare path never touches the network; for a cloud skill write gh:owner/repo/path or hub:team/collection).`,
      );
    }
    return this.resolveCloud(id, options.offline ?? false);
  }

  /**
   * The content folder of a cloud skill exactly at `revision` (for a re-save's byte comparison): from the
   * cache when it still holds that revision, else fetched. Throws when it cannot be had.
   */
  async contentAt(id: Identity, revision: string, options: { offline?: boolean } = {}): Promise<string> {
    const cached = await this.cache.read(id.identity);
    if (cached) {
      const { meta } = cached;
      if (meta.revision === revision && cached.dir) return cached.dir;
      if (
        meta.previous?.revision === revision &&
        (await this.cache.hasContent(id.identity, meta.previous.contentKey))
      ) {
        return this.cache.contentDir(id.identity, meta.previous.contentKey);
      }
    }
    if (options.offline)
      throw new ResolveError('offline', `the cache does not hold ${id.identity} at ${revision}`);
    if (this.viaHub(id)) return (await this.hub()).fetchRevision(id, revision);
    const fetched = await (await this.git()).fetch(id, { revision });
    if (fetched.kind !== 'skill' || !fetched.contentKey)
      throw new ResolveError('usage', `${id.identity} was a menu at ${revision}, not a skill.`);
    return this.cache.contentDir(id.identity, fetched.contentKey);
  }

  /** The default branch's head commit of a `gh:` identity's repository (`git ls-remote`, no download). */
  async headCommit(id: Identity): Promise<string> {
    return (await this.git()).probe(id);
  }

  private async resolveCloud(id: Identity, offline: boolean): Promise<Resolved> {
    const cached = await this.cache.read(id.identity);
    if (offline) {
      if (cached) return this.fromCache(cached, 'offline: the revision was not checked');
      throw new ResolveError(
        'offline',
        `${id.identity} is not in the cache and --offline forbids fetching it.`,
      );
    }
    let fetched: FetchedEntry | undefined;
    try {
      fetched = await this.refresh(id, cached?.meta);
    } catch (error) {
      if (!(error instanceof ResolveError) || !cached) throw error;
      return this.fromCache(cached, staleReason(error, cached.meta));
    }
    const now = new Date().toISOString();
    if (!fetched) {
      const meta = { ...cached!.meta, checkedAt: now };
      await this.cache.writeMeta(meta);
      return this.fromCache({ ...cached!, meta });
    }
    const meta: CacheEntryMeta = { ...fetched, checkedAt: now };
    const old = cached?.meta;
    if (old?.contentKey && old.contentKey !== fetched.contentKey)
      meta.previous = { revision: old.revision, contentKey: old.contentKey };
    else if (old?.previous) meta.previous = old.previous;
    await this.cache.writeMeta(meta);
    const entry = await this.cache.read(id.identity);
    if (!entry)
      throw new ResolveError(
        'network',
        `${id.identity}: the fetched entry vanished from the cache (cleared meanwhile?).`,
      );
    return { ...(await this.fromCache(entry)), origin: 'fetched' };
  }

  /** One revision probe; undefined when the cache is current, else the newly fetched entry. */
  private async refresh(id: Identity, known: CacheEntryMeta | undefined): Promise<FetchedEntry | undefined> {
    if (this.viaHub(id)) {
      const answer = await (await this.hub()).refresh(
        id,
        known ? (known.etag ?? `"${known.revision}"`) : undefined,
      );
      return answer.status === 'unchanged' ? undefined : answer.entry;
    }
    const git = await this.git();
    const head = await git.probe(id);
    if (known && head === known.revision) return undefined;
    return git.fetch(id);
  }

  private viaHub(id: Identity): boolean {
    return id.source === 'hub' || (id.source === 'gh' && this.settings.ghViaHub);
  }

  private async fromCache(entry: CachedEntry, staleReasonText?: string): Promise<Resolved> {
    const { meta } = entry;
    const base = {
      identity: meta.identity,
      revision: meta.revision,
      stale: staleReasonText !== undefined,
      origin: 'cache' as const,
      fetchedAt: meta.fetchedAt,
      ...(staleReasonText !== undefined ? { staleReason: staleReasonText } : {}),
    };
    if (meta.kind === 'menu') return { ...base, kind: 'menu', items: meta.items ?? [] };
    const known =
      meta.name && meta.description ? { name: meta.name, description: meta.description } : undefined;
    const skill = await readSkill(entry.dir!, meta.identity, known);
    return {
      ...base,
      ...skill,
      name: meta.name ?? skill.name,
      description: meta.description ?? skill.description,
    };
  }
}

/**
 * Reads a skill folder's SKILL.md: name, description and the body after the frontmatter. With `known`
 * (a cached skill whose frontmatter parsed when it was fetched; its content never changes) only the body
 * is cut out, and yaml is not loaded.
 */
async function readSkill(dir: string, identityPath: string, known?: { name: string; description: string }) {
  const folder = path.posix.basename(splitIdentityPrefix(identityPath).rest);
  const content = readFileSync(path.join(dir, SKILL_FILE)); // one file per resolve: sync is cheaper
  const parts = known ? splitFrontmatter(content.toString('utf8').replace(/^\uFEFF/, '')) : undefined;
  if (known && parts) return { kind: 'skill' as const, dir, ...known, body: parts.body };
  const { tryParseSkillMarkdown } = await import('../frontmatter.js');
  const doc = tryParseSkillMarkdown(content, folder);
  if (doc.ok)
    return {
      kind: 'skill' as const,
      dir,
      name: doc.doc.name,
      description: doc.doc.description,
      body: doc.doc.body,
    };
  // A SKILL.md whose frontmatter is broken is still injected whole: the agent can read it.
  return { kind: 'skill' as const, dir, name: folder, description: '', body: content.toString('utf8') };
}

function staleReason(error: ResolveError, meta: CacheEntryMeta): string {
  const date = meta.fetchedAt.slice(0, 10);
  if (error.code === 'gone') return `upstream gone, cached copy from ${date}`;
  return `${error.message} Serving the cached copy from ${date}.`;
}
