import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { splitFrontmatter } from '../frontmatter-split.js';
import { diskPath, type Identity, parseIdentity, splitIdentityPrefix } from '../identity.js';
import { SKILL_FILE } from '../leaf-rule.js';
import type { MenuItem } from '../menu.js';
import type { SourceStamp } from '../source-stamp.js';
import { type CachedEntry, type CacheEntryMeta, clientCache, type SkillCache } from './cache.js';
import type { FetchedEntry, GitSource } from './git-source.js';
import type { BatchAnswer, HubSource } from './hub-source.js';
import type { LocalSkillProblem } from './local-check.js';
import { enclosingSkill, resolveLocal } from './local-source.js';
import { ResolveError, type ResolveErrorCode } from './resolve-error.js';
import type { ClientSettings } from './settings.js';
import { trySourceStampSync } from './source-file.js';

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
  /** The failed check's code (`gone`, `network`, `offline`, ...) when the answer is stale. */
  staleCode?: ResolveErrorCode;
  origin: Origin;
  /** When the cached content was fetched (cloud answers only). */
  fetchedAt?: string;
  /**
   * The hub's safety flag codes for this revision (SPEC 2.8), kept in the cache with it; [] when the source
   * names none (project files, `gh:` over git).
   */
  flags: string[];
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
  /**
   * Epoch milliseconds after which nothing waits on the network any more (a hook's budget, SPEC 2.5): an
   * answer not in by then is served from the cache marked stale, or fails with `offline`. Resolves with a
   * deadline are memoized per identity for the resolver's life, so the same skill is probed once per hook.
   */
  deadline?: number;
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
  /** Cloud answers of resolves under a deadline, by identity (one probe per identity per hook). */
  private readonly withinDeadline = new Map<string, Promise<Resolved>>();
  /**
   * Flags the hub named for `gh:` skills resolved over git (asked in the same batch, by their folder's tree
   * sha): git knows no flags, but a hub that has indexed the repository does.
   */
  private readonly ghFlags = new Map<string, Promise<string[] | undefined>>();
  /**
   * The hub's verdict on the revision a project copy was saved at (SPEC 2.8), by `verdictKey`: undefined when
   * no hub answered about it, and the flags this machine last heard stand.
   */
  private readonly savedVerdicts = new Map<string, Promise<string[] | undefined>>();
  /** The revision each identity of `batched` and `ghFlags` was asked about. */
  private readonly batchedRevision = new Map<string, string>();
  /** What one batch probe said, by identity: consulted instead of a probe of its own. */
  private readonly batched = new Map<
    string,
    Promise<BatchAnswer | { status: 'failed'; error: ResolveError }>
  >();

  constructor(readonly settings: Readonly<ClientSettings>) {
    this.cache = clientCache(settings);
  }

  private git(): Promise<GitSource> {
    this.gitSource ??= import('./git-source.js').then((m) => new m.GitSource(this.settings, this.cache));
    return this.gitSource;
  }

  private hub(): Promise<HubSource> {
    this.hubSource ??= import('./hub-source.js').then((m) => new m.HubSource(this.settings, this.cache));
    return this.hubSource;
  }

  /**
   * The safety flags of the cloud skill a project copy was saved from (its `.source` stamp's identity, else
   * the cloud identity asked for): a saved copy is framed, refused and asked about on `:install` as the skill
   * itself is (SPEC 2.8). A stamped copy's verdict is asked of the hub for the revision it was saved at (a
   * verdict can come after the save), within the caller's budget; offline or unanswered, the flags the hub
   * last named to this machine stand. [] when none is known.
   */
  private async savedCopyFlags(
    id: Identity,
    dir: string,
    options: Pick<ResolveOptions, 'offline' | 'deadline'>,
  ): Promise<string[]> {
    const stamp = trySourceStampSync(dir);
    const origin = stamp?.identity ?? (id.source === 'local' ? undefined : id.identity);
    if (!origin) return [];
    let cached: string[] = [];
    try {
      cached = this.cache.readMeta(origin)?.flags ?? [];
    } catch {
      // An unreadable cache entry knows no flags; the hub may still be asked below.
    }
    // A bare path never touches the network (SPEC 1.3): its copy keeps the flags this machine last heard.
    const question =
      stamp && !options.offline && id.source !== 'local' ? this.verdictQuestion(stamp) : undefined;
    if (!question) return cached;
    return (await this.savedVerdict(question, options.deadline)) ?? cached;
  }

  /**
   * The flags of the project's copy of `identity` (a skill of a followed folder that the project saved), as
   * `resolve` gives them for the copy itself.
   */
  savedFlags(identity: string, options: Pick<ResolveOptions, 'projectDir' | 'offline' | 'deadline'>) {
    const id = parseIdentity(identity);
    return this.savedCopyFlags(id, path.join(options.projectDir, diskPath(id)), options);
  }

  /**
   * What the hub is asked about a saved copy: its origin identity at the revision its stamp records. A `gh:`
   * copy read over git records a commit, and the hub keys a folder by its tree sha: the one the cache holds
   * for that commit, if any.
   */
  private verdictQuestion(stamp: SourceStamp): VerdictQuestion | undefined {
    let id: Identity;
    try {
      id = parseIdentity(stamp.identity);
    } catch {
      return undefined;
    }
    if (id.source === 'local') return undefined;
    if (this.viaHub(id)) return { id, revision: stamp.revision };
    let meta: CacheEntryMeta | undefined;
    try {
      meta = this.cache.readMeta(id.identity);
    } catch {
      return undefined;
    }
    const tree =
      meta?.revision === stamp.revision
        ? meta.contentKey
        : meta?.previous?.revision === stamp.revision
          ? meta.previous.contentKey
          : undefined;
    return tree ? { id, revision: tree } : undefined;
  }

  /** The question about the project's stamped copy of `id`, if the project holds one (read synchronously). */
  private savedQuestion(id: Identity, projectDir: string): VerdictQuestion | undefined {
    const dir = path.join(projectDir, diskPath(id));
    try {
      if (!lstatSync(path.join(dir, SKILL_FILE)).isFile()) return undefined;
    } catch {
      return undefined;
    }
    const stamp = trySourceStampSync(dir);
    return stamp ? this.verdictQuestion(stamp) : undefined;
  }

  /**
   * The hub's verdict on one saved revision (`HEAD ?rev=`) unless a batch asked already; under a deadline it
   * is asked once per resolver, as cloud answers are (one hook, one question per skill).
   */
  private savedVerdict(question: VerdictQuestion, deadline?: number): Promise<string[] | undefined> {
    const key = verdictKey(question);
    const known = this.savedVerdicts.get(key);
    if (known) return known;
    if (deadline === undefined)
      return this.revisionFlags(question, Math.min(this.settings.probeTimeoutMs, FLAGS_TIMEOUT_MS));
    const verdict =
      this.fromCloudBatch(question, deadline) ?? this.revisionFlags(question, deadline - Date.now());
    this.savedVerdicts.set(key, verdict);
    return verdict;
  }

  /**
   * The verdict a batch that asked about the cached revision gives a saved copy at that same revision (the
   * common case: saved from what the cache holds), so that a caller batching cloud identities only (a prompt
   * hook) sends no request of its own for the copy; undefined when no batch asked about that revision.
   */
  private fromCloudBatch(question: VerdictQuestion, end: number): Promise<string[] | undefined> | undefined {
    if (this.batchedRevision.get(question.id.identity) !== question.revision) return undefined;
    const batched = this.batched.get(question.id.identity);
    if (batched)
      return batched.then((answer) =>
        this.verdictOf(answer.status === 'failed' ? 'failed' : answer, question, end),
      );
    return this.ghFlags
      .get(question.id.identity)
      ?.then((flags) => flags ?? this.revisionFlags(question, end - Date.now()));
  }

  /**
   * The flags the hub names for `question`'s revision (`HEAD ?rev=`), kept in the cache entry when it holds
   * that revision, so that an offline answer later still carries them; undefined without an answer in time.
   */
  private async revisionFlags(question: VerdictQuestion, timeoutMs: number): Promise<string[] | undefined> {
    if (timeoutMs <= 0) return undefined;
    const flags = await (await this.hub()).flagsAtRevision(question.id, question.revision, timeoutMs);
    if (flags) await this.rememberFlags(question, flags);
    return flags;
  }

  /** Writes a fresh verdict into the cache entry of the same revision (best effort: the answer stands anyway). */
  private async rememberFlags(question: VerdictQuestion, flags: string[]): Promise<void> {
    try {
      const meta = this.cache.readMeta(question.id.identity);
      if (!meta) return;
      const same = this.viaHub(question.id)
        ? meta.revision === question.revision
        : meta.contentKey === question.revision;
      if (!same || (meta.flags ?? []).join(',') === flags.join(',')) return;
      await this.cache.writeMeta({ ...meta, flags });
    } catch {
      // A cache that cannot be written keeps its old flags; this answer carries the new ones.
    }
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
          flags: await this.savedCopyFlags(id, local.dir, options),
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
          flags: [],
          items: local.items,
        };
    }
    if (id.source === 'local') {
      const skill = enclosingSkill(options.projectDir, id);
      if (skill !== undefined)
        throw new ResolveError(
          'not-found',
          `.atskills/${id.path} is inside the project skill ${skill}: a skill's folders are its files, not skills of their own (reference ${skill} and open its files from its path).`,
        );
      throw new ResolveError(
        'not-found',
        `No project skill at .atskills/${id.path} (a bare path never touches the network; for a cloud skill write gh:owner/repo/path or hub:team/collection).`,
      );
    }
    try {
      return await (options.deadline !== undefined && !options.offline
        ? this.resolveByDeadline(id, options.deadline)
        : this.resolveCloud(id, options.offline ?? false));
    } catch (error) {
      throw cacheUnusable(error, this.settings.cacheDir) ?? error;
    }
  }

  /**
   * Asks the hub once, in one `POST /v1/resolve`, about every hub-served identity among `identities` that the
   * cache holds, so that their resolves need no probe of their own (a hook's lines, SPEC 2.5). A failed batch
   * makes those resolves serve the cache at once, marked stale, instead of each waiting on the hub again.
   * With `projectDir`, an identity the project saved is asked about at its saved revision instead: its
   * resolve answers locally and needs only the hub's verdict on that revision (SPEC 2.8).
   */
  probeBatch(
    identities: readonly string[],
    options: { deadline?: number; projectDir?: string } = {},
  ): Promise<void> {
    // Registered synchronously, before any await: a resolve started right after this call finds its answer.
    const items: BatchItem[] = [];
    const inBatch = new Set<string>();
    for (const text of new Set(identities)) {
      let id: Identity;
      try {
        id = parseIdentity(text);
      } catch {
        continue;
      }
      let saved =
        options.projectDir && id.source !== 'local' ? this.savedQuestion(id, options.projectDir) : undefined;
      if (saved && this.savedVerdicts.has(verdictKey(saved))) saved = undefined;
      let cloud: (VerdictQuestion & { flagsOnly?: boolean }) | undefined;
      if (id.source !== 'local' && !this.batched.has(id.identity) && !this.ghFlags.has(id.identity)) {
        const meta = this.cache.readMeta(id.identity);
        if (meta && this.viaHub(id)) cloud = { id, revision: meta.revision };
        // A gh: skill over git: the hub compares the folder's tree sha, and may name its flags.
        else if (meta?.contentKey) cloud = { id, revision: meta.contentKey, flagsOnly: true };
      }
      // One item per identity (answers are keyed by it): a saved copy's, which serves the cached revision's
      // resolve too when that is the same revision; the saved copy answers locally, so it wins otherwise.
      const sameRevision = cloud?.id.identity === saved?.id.identity && cloud?.revision === saved?.revision;
      const item: BatchItem | undefined = saved
        ? { ...(sameRevision ? { ...cloud, ...saved, cached: true } : saved), savedKey: verdictKey(saved) }
        : cloud && { ...cloud, cached: true };
      if (!item || inBatch.has(item.id.identity)) continue;
      inBatch.add(item.id.identity);
      items.push(item);
    }
    const asked = items.slice(0, 128);
    if (asked.length === 0) return Promise.resolve();
    const timeoutMs = options.deadline
      ? Math.max(1, options.deadline - Date.now())
      : this.settings.probeTimeoutMs;
    const end = Date.now() + timeoutMs;
    const answers = this.hub()
      .then((hub) => hub.probeBatch(asked, timeoutMs))
      .catch((error: unknown) => {
        // An unreachable hub fails every line at once; any other refusal of the batch (an older hub without
        // the endpoint) leaves each line to its own probe.
        if (error instanceof ResolveError && (error.code === 'offline' || error.code === 'network'))
          return error;
        return new Map<string, BatchAnswer>();
      });
    for (const item of asked) {
      const { id, flagsOnly, savedKey } = item;
      if (savedKey)
        this.savedVerdicts.set(
          savedKey,
          answers.then((all) =>
            this.verdictOf(all instanceof ResolveError ? 'failed' : all.get(id.identity), item, end),
          ),
        );
      if (!item.cached) continue;
      this.batchedRevision.set(id.identity, item.revision);
      if (flagsOnly) {
        this.ghFlags.set(
          id.identity,
          answers.then((all) => {
            const answer = all instanceof ResolveError ? undefined : all.get(id.identity);
            return answer?.status === 'unchanged' ? answer.flags : undefined;
          }),
        );
        continue;
      }
      this.batched.set(
        id.identity,
        answers.then((all) =>
          all instanceof ResolveError
            ? { status: 'failed' as const, error: all }
            : (all.get(id.identity) ?? { status: 'other' as const }),
        ),
      );
    }
    return answers.then(() => undefined);
  }

  /**
   * A saved revision's verdict from a batch answer: the flags of an unchanged revision; a revision the hub
   * has moved past (or any other answer, or a batch the hub did not take) is asked by `?rev=` within what is
   * left of the budget. An unreachable hub is not asked again.
   */
  private async verdictOf(
    answer: BatchAnswer | 'failed' | undefined,
    question: VerdictQuestion,
    end: number,
  ): Promise<string[] | undefined> {
    if (answer === 'failed') return undefined;
    if (answer?.status === 'unchanged' && answer.flags) {
      await this.rememberFlags(question, answer.flags);
      return answer.flags;
    }
    return this.revisionFlags(question, end - Date.now());
  }

  /** The cloud answer within a deadline: the cache (marked stale) when the source has not answered by then. */
  private resolveByDeadline(id: Identity, deadline: number): Promise<Resolved> {
    const known = this.withinDeadline.get(id.identity);
    if (known) return known;
    const answer = (async () => {
      const late = () => `the source did not answer within the time budget (${id.identity})`;
      if (Date.now() >= deadline) return this.resolveCloud(id, true, late());
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'late'>((done) => {
        timer = setTimeout(() => done('late'), deadline - Date.now());
      });
      const work = this.resolveCloud(id, false);
      try {
        const first = await Promise.race([work, expired]);
        if (first !== 'late') return first;
      } finally {
        clearTimeout(timer);
      }
      // The work goes on unobserved (a hook exits once it has answered): its failure is not this answer's.
      work.catch(() => {});
      return this.resolveCloud(id, true, late());
    })();
    this.withinDeadline.set(id.identity, answer);
    return answer;
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

  private async resolveCloud(id: Identity, offline: boolean, why?: string): Promise<Resolved> {
    const cached = await this.cache.read(id.identity);
    if (offline) {
      if (cached) return this.fromCache(cached, why ?? 'offline: the revision was not checked', 'offline');
      throw new ResolveError(
        'offline',
        why
          ? `${why}, and nothing is cached.`
          : `${id.identity} is not in the cache and --offline forbids fetching it.`,
      );
    }
    let fetched: FetchedEntry | undefined;
    let flags: string[] | undefined;
    try {
      ({ fetched, flags } = await this.refresh(id, cached?.meta));
    } catch (error) {
      if (!(error instanceof ResolveError) || !cached || refusesOverCache(error.code, this.viaHub(id)))
        throw error;
      return this.fromCache(cached, staleReason(error, cached.meta), error.code);
    }
    const now = new Date().toISOString();
    if (!fetched) {
      const meta = { ...cached!.meta, checkedAt: now, ...(flags ? { flags } : {}) };
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

  /**
   * One revision probe: no `fetched` when the cache is current (with the flags the source named, if any),
   * else the newly fetched entry. A batch answer about this identity stands in for the probe.
   */
  private async refresh(
    id: Identity,
    known: CacheEntryMeta | undefined,
  ): Promise<{ fetched?: FetchedEntry; flags?: string[] }> {
    if (this.viaHub(id)) {
      const batched = await this.batched.get(id.identity);
      if (batched?.status === 'failed') throw batched.error;
      if (batched?.status === 'unchanged' && known) return batched.flags ? { flags: batched.flags } : {};
      const answer = await (await this.hub()).refresh(
        id,
        known ? (known.etag ?? `"${known.revision}"`) : undefined,
      );
      return answer.status === 'unchanged' ? { flags: answer.flags ?? [] } : { fetched: answer.entry };
    }
    // Over git: git knows no verdicts, the hub that indexed the repository does, by the folder's content
    // (SPEC 2.8: a verdict holds for every revision with the same content). Asked after every probe and
    // fetch, not only in a hook's batch, so a first read, a new head or `install` carries them too.
    const git = await this.git();
    const head = await git.probe(id);
    if (known && head === known.revision) {
      // A hook's batch already asked about this content: its answer stands, found or not.
      const batched = this.ghFlags.get(id.identity);
      const flags = batched
        ? await batched
        : known.contentKey
          ? await this.flagsAt(id, known.contentKey)
          : undefined;
      return flags ? { flags } : {};
    }
    const fetched = await git.fetch(id);
    const sameContent = known?.contentKey !== undefined && known.contentKey === fetched.contentKey;
    const flags =
      (fetched.contentKey ? await this.flagsAt(id, fetched.contentKey) : undefined) ??
      (sameContent ? known?.flags : undefined);
    return { fetched: flags ? { ...fetched, flags } : fetched };
  }

  /**
   * The flags the hub names for a `gh:` skill folder at one tree sha, or undefined when no hub answered
   * about that content (not indexed there, indexed at other content, unreachable). A hub is not needed to
   * read `gh:` over git, so one that does not answer quickly is not waited for.
   */
  private async flagsAt(id: Identity, contentKey: string): Promise<string[] | undefined> {
    try {
      const hub = await this.hub();
      const answers = await hub.probeBatch(
        [{ id, revision: contentKey }],
        Math.min(this.settings.probeTimeoutMs, FLAGS_TIMEOUT_MS),
      );
      const answer = answers.get(id.identity);
      return answer?.status === 'unchanged' ? answer.flags : undefined;
    } catch (error) {
      if (error instanceof ResolveError) return undefined;
      throw error;
    }
  }

  /**
   * The flags the hub names for each of `identities` now, in one batch (up to 128): a folder's members,
   * whose menu carries none. Those the hub does not know or did not answer about are left out.
   */
  async hubFlags(
    identities: readonly string[],
    options: { deadline?: number } = {},
  ): Promise<Map<string, string[]>> {
    const known = new Map<string, string[]>();
    const ids: Identity[] = [];
    for (const text of new Set(identities)) {
      try {
        const id = parseIdentity(text);
        if (id.source !== 'local') ids.push(id);
      } catch {
        // Not an identity: nothing to ask.
      }
    }
    if (ids.length === 0 || (options.deadline !== undefined && options.deadline <= Date.now())) return known;
    const timeoutMs =
      options.deadline !== undefined
        ? Math.max(1, options.deadline - Date.now())
        : Math.min(this.settings.probeTimeoutMs, FLAGS_TIMEOUT_MS);
    const hub = await this.hub();
    for (let i = 0; i < ids.length; i += 128) {
      let answers: Map<string, BatchAnswer>;
      try {
        answers = await hub.probeBatch(
          ids.slice(i, i + 128).map((id) => ({ id })),
          timeoutMs,
        );
      } catch (error) {
        if (error instanceof ResolveError) break;
        throw error;
      }
      for (const [identity, answer] of answers)
        if (answer.status !== 'other' && answer.flags) known.set(identity, answer.flags);
    }
    return known;
  }

  private viaHub(id: Identity): boolean {
    return id.source === 'hub' || (id.source === 'gh' && this.settings.ghViaHub);
  }

  private async fromCache(
    entry: CachedEntry,
    staleReasonText?: string,
    staleCode?: ResolveErrorCode,
  ): Promise<Resolved> {
    const { meta } = entry;
    const base = {
      identity: meta.identity,
      revision: meta.revision,
      stale: staleReasonText !== undefined,
      origin: 'cache' as const,
      fetchedAt: meta.fetchedAt,
      flags: meta.flags ?? [],
      ...(staleReasonText !== undefined ? { staleReason: staleReasonText } : {}),
      ...(staleReasonText !== undefined && staleCode ? { staleCode } : {}),
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

/** A saved copy's question to the hub: its origin identity at the revision the hub keys its content by. */
interface VerdictQuestion {
  id: Identity;
  revision: string;
}

/** One item of a batch probe: a cached revision's (`flagsOnly` for `gh:` over git) and/or a saved copy's. */
interface BatchItem extends VerdictQuestion {
  flagsOnly?: boolean;
  /** Set when the item asks about a saved copy's revision (its key in `savedVerdicts`). */
  savedKey?: string;
  /** The item asks about the revision the cache holds: its answer stands in for that resolve's probe. */
  cached?: boolean;
}

function verdictKey(question: VerdictQuestion): string {
  return `${question.id.identity}\0${question.revision}`;
}

/** How long a `gh:` read over git waits for the hub's verdict on its content (ms), past which it has none. */
const FLAGS_TIMEOUT_MS = 5_000;

/**
 * Answers that say this caller may not read the identity: the cached copy is not served in their place, or a
 * revoked token or a removed member would read on. A hub says "no access" as 404 too (SPEC 2.2; a skill it
 * lost upstream is 410); git's "no such folder" is a skill deleted upstream, whose cached copy is served.
 */
function refusesOverCache(code: ResolveErrorCode, viaHub: boolean): boolean {
  return code === 'no-access' || (viaHub && code === 'not-found');
}

/** The file-system errors that say the cache folder itself cannot be used (not a race between processes). */
const UNUSABLE_CACHE = new Set(['EACCES', 'EPERM', 'ENOTDIR', 'EROFS', 'ENAMETOOLONG']);

/**
 * A file-system error met in the cache folder, as a usage error naming the settings that choose the folder
 * (it surfaced as a bare `EACCES: permission denied, open '…/entry.json'`); undefined for any other error.
 */
function cacheUnusable(error: unknown, cacheDir: string): ResolveError | undefined {
  const { code, path: where, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code !== 'string' || typeof where !== 'string' || !where.startsWith(cacheDir)) return undefined;
  // A folder that cannot be made although its parent exists (a path under /proc) says ENOENT.
  if (!UNUSABLE_CACHE.has(code) && !(code === 'ENOENT' && syscall === 'mkdir')) return undefined;
  return new ResolveError(
    'usage',
    `The cache folder ${cacheDir} cannot be used (${code} on ${where}): set ATSKILLS_CACHE (or XDG_CACHE_HOME) to a folder this user may write, or fix its permissions.`,
  );
}
