import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { printableIdentity } from '../frame.js';
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
import { SOURCE_FILE, trySourceStampSync } from './source-file.js';

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
  /**
   * A saved copy whose hub verdict on its saved revision is not known (SPEC 2.8): why, in one sentence
   * naming the identity and revision. Its `flags` are then [] for want of any, not because it has none.
   */
  verdictUnchecked?: string;
  /** What the hub said of its copy (`files-left-out`, `link-stale`) in its last full answer; absent: nothing. */
  hubWarnings?: string[];
}

/** A resolved folder without SKILL.md: one row per skill beneath it. */
export interface ResolvedMenu extends ResolvedBase {
  kind: 'menu';
  items: MenuItem[];
}

export type Resolved = ResolvedSkill | ResolvedMenu;

/** The verdict a saved copy is read with: the hub's flags on its saved revision, or why they are unknown. */
export interface SavedVerdict {
  flags: string[];
  /** Set when no verdict on the saved revision is known ([] flags then mean "unknown"). */
  unchecked?: string;
}

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
   * The hub's verdict on the revision a project copy was saved at (SPEC 2.8), by `verdictKey`, asked once per
   * resolver: the flags, or why there are none (then a verdict this machine heard before on that same
   * revision stands, if any).
   */
  private readonly savedVerdicts = new Map<string, Promise<Heard>>();
  /**
   * Why the hub could not be reached the first time a verdict was asked of it: a verdict is never needed to
   * read, so once the hub is known to be unreachable it is not waited for again in this resolver's life.
   */
  private hubUnreachable?: string;
  /** The git tree sha of saved `gh:` copies, by folder (computed once per resolver). */
  private readonly savedTrees = new Map<string, string | undefined>();
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
   * The verdict a project copy is read with (SPEC 2.8). A copy stamped by `:save` is framed, refused and
   * asked about on `:install` with the hub's verdict on the revision it was saved at, asked once per resolver
   * within the caller's budget (a bare path never asks, SPEC 1.3). Unanswered, a verdict this machine heard
   * on that same revision stands; failing that the verdict is unknown (`unchecked`), never another
   * revision's. A copy without a stamp carries the flags the cache holds for its identity.
   */
  private async savedCopyFlags(
    id: Identity,
    dir: string,
    options: Pick<ResolveOptions, 'offline' | 'deadline'>,
  ): Promise<SavedVerdict> {
    const stamp = trySourceStampSync(dir);
    if (!stamp) {
      if (id.source === 'local') return { flags: [] };
      try {
        return { flags: this.cache.readMeta(id.identity)?.flags ?? [] };
      } catch {
        return { flags: [] }; // an unreadable cache entry knows no flags
      }
    }
    const unchecked = (why: string): SavedVerdict => ({
      flags: [],
      unchecked: `the hub's verdict on ${printableIdentity(stamp.identity)} at its saved revision ${printableIdentity(stamp.revision)} could not be checked (${why})`,
    });
    const question = this.verdictQuestion(stamp, dir);
    if (!question)
      return /^(gh|hub):/.test(stamp.identity)
        ? unchecked('the saved folder could not be hashed as git hashes it')
        : { flags: [] };
    let why: string;
    if (options.offline) why = 'offline';
    else if (id.source === 'local') why = 'a bare path never asks the hub';
    else {
      const heard = await this.savedVerdict(question, options.deadline);
      if (heard.flags) return { flags: heard.flags };
      why = (heard.why ?? 'no answer').replace(/\.$/, '');
    }
    const known = this.knownVerdict(question);
    return known ? { flags: known } : unchecked(`${why}; none was heard before`);
  }

  /**
   * The verdict on the project's copy of `identity` (a skill of a followed folder that the project saved), as
   * `resolve` reads the copy itself with it.
   */
  savedFlags(
    identity: string,
    options: Pick<ResolveOptions, 'projectDir' | 'offline' | 'deadline'>,
  ): Promise<SavedVerdict> {
    const id = parseIdentity(identity);
    return this.savedCopyFlags(id, path.join(options.projectDir, diskPath(id)), options);
  }

  /**
   * What the hub is asked about a saved copy: its origin identity at the revision its stamp records. A `gh:`
   * copy read over git records a commit, and the hub keys a folder by its tree sha: the one the cache holds
   * for that commit, else the copy's own, hashed as git does (so no cache is needed to ask).
   */
  private verdictQuestion(stamp: SourceStamp, dir: string): VerdictQuestion | undefined {
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
      meta = undefined;
    }
    const tree =
      (meta?.revision === stamp.revision ? meta.contentKey : undefined) ??
      (meta?.previous?.revision === stamp.revision ? meta.previous.contentKey : undefined) ??
      this.savedTree(dir, stamp.revision);
    return tree ? { id, revision: tree } : undefined;
  }

  /** The git tree sha of a saved `gh:` copy (its `.source` left out), or undefined when it cannot be had. */
  private savedTree(dir: string, revision: string): string | undefined {
    if (!this.savedTrees.has(dir)) {
      let tree: string | undefined;
      try {
        // A repository's object format shows in its commit ids: 64 hex digits are SHA-256.
        tree = gitTreeSha(dir, revision.length === 64 ? 'sha256' : 'sha1', [SOURCE_FILE]);
      } catch {
        tree = undefined;
      }
      this.savedTrees.set(dir, tree);
    }
    return this.savedTrees.get(dir);
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
    return stamp ? this.verdictQuestion(stamp, dir) : undefined;
  }

  /**
   * The hub's verdict on one saved revision (`HEAD ?rev=`) unless a batch asked already; asked once per
   * resolver, within `deadline` or else a short wait of its own (a verdict is never needed to read).
   */
  private savedVerdict(question: VerdictQuestion, deadline?: number): Promise<Heard> {
    const key = verdictKey(question);
    let verdict = this.savedVerdicts.get(key);
    if (!verdict) {
      const end = deadline ?? Date.now() + Math.min(this.settings.probeTimeoutMs, FLAGS_TIMEOUT_MS);
      verdict = this.fromCloudBatch(question, end) ?? this.revisionFlags(question, end - Date.now());
      this.savedVerdicts.set(key, verdict);
    }
    return verdict;
  }

  /**
   * The verdict a batch that asked about the cached revision gives a saved copy at that same revision (the
   * common case: saved from what the cache holds), so that a caller batching cloud identities only (a prompt
   * hook) sends no request of its own for the copy; undefined when no batch asked about that revision.
   */
  private fromCloudBatch(question: VerdictQuestion, end: number): Promise<Heard> | undefined {
    if (this.batchedRevision.get(question.id.identity) !== question.revision) return undefined;
    const batched = this.batched.get(question.id.identity);
    if (batched)
      return batched.then((answer) =>
        this.verdictOf(answer.status === 'failed' ? answer.error : answer, question, end),
      );
    return this.ghFlags
      .get(question.id.identity)
      ?.then((flags) => (flags ? { flags } : this.revisionFlags(question, end - Date.now())));
  }

  /**
   * The flags the hub names for `question`'s revision (`HEAD ?rev=`), kept in the cache entry (under that
   * revision), so that an offline answer later still carries them; or why there are none. A hub found
   * unreachable is not asked again by this resolver.
   */
  private async revisionFlags(question: VerdictQuestion, timeoutMs: number): Promise<Heard> {
    if (this.hubUnreachable) return { why: this.hubUnreachable };
    if (timeoutMs <= 0) return { why: 'the time budget ran out before the hub was asked' };
    try {
      const flags = await (await this.hub()).flagsAtRevision(question.id, question.revision, timeoutMs);
      if (!flags) return { why: 'the hub does not know that revision, or this token may not read it' };
      await this.rememberVerdict(question, flags);
      return { flags };
    } catch (error) {
      if (!(error instanceof ResolveError)) throw error;
      this.hubUnreachable ??= error.message;
      return { why: error.message };
    }
  }

  /**
   * The verdict this machine last heard on `question`'s revision: the cache entry's flags when it holds that
   * revision, else the verdict kept under that revision; undefined when none was heard.
   */
  private knownVerdict(question: VerdictQuestion): string[] | undefined {
    let meta: CacheEntryMeta | undefined;
    try {
      meta = this.cache.readMeta(question.id.identity);
    } catch {
      return undefined;
    }
    if (!meta) return undefined;
    // An entry whose flags nobody named (a gh: read while the hub did not answer) knows no verdict: unknown.
    if (this.revisionKey(question.id, meta) === question.revision) return meta.flags;
    return ownVerdict(meta.verdicts, question.revision);
  }

  /**
   * Writes a fresh verdict into the cache entry: as its flags when it holds that revision, else kept under
   * the revision (best effort: the answer stands anyway). Without an entry there is nowhere to keep it.
   */
  private async rememberVerdict(question: VerdictQuestion, flags: string[]): Promise<void> {
    try {
      const meta = this.cache.readMeta(question.id.identity);
      if (!meta) return;
      if (this.revisionKey(question.id, meta) === question.revision) {
        if ((meta.flags ?? []).join(',') !== flags.join(',')) await this.cache.writeMeta({ ...meta, flags });
        return;
      }
      const kept = meta.verdicts?.[question.revision];
      if (kept && kept.join(',') === flags.join(',')) return;
      await this.cache.writeMeta({ ...meta, verdicts: withVerdict(meta.verdicts, question.revision, flags) });
    } catch {
      // A cache that cannot be written keeps its old verdicts; this answer carries the new ones.
    }
  }

  /** A probe's fresh flags on a revision are what a saved copy at that revision is read with from now on. */
  private heard(id: Identity, meta: CacheEntryMeta): void {
    const revision = this.revisionKey(id, meta);
    if (meta.flags && revision !== undefined)
      this.savedVerdicts.set(verdictKey({ id, revision }), Promise.resolve({ flags: meta.flags }));
  }

  /** The revision the hub keys an entry's verdict by: a `gh:` folder read over git by its tree sha. */
  private revisionKey(id: Identity, meta: CacheEntryMeta): string | undefined {
    return this.viaHub(id) ? meta.revision : meta.contentKey;
  }

  /**
   * The verdicts a new revision's entry keeps: those of saved revisions, and the flags of the revision it
   * replaces (a copy saved from it may still need them offline).
   */
  private carriedVerdicts(
    id: Identity,
    old: CacheEntryMeta | undefined,
    next: CacheEntryMeta,
  ): Record<string, string[]> | undefined {
    if (!old) return undefined;
    const oldKey = this.revisionKey(id, old);
    let verdicts =
      old.flags && oldKey !== undefined ? withVerdict(old.verdicts, oldKey, old.flags) : old.verdicts;
    const nextKey = this.revisionKey(id, next);
    if (verdicts && nextKey !== undefined && Object.hasOwn(verdicts, nextKey)) {
      // The entry's own flags speak for its revision.
      verdicts = Object.assign(Object.create(null), verdicts) as Record<string, string[]>;
      delete verdicts[nextKey];
    }
    return verdicts && Object.keys(verdicts).length > 0 ? verdicts : undefined;
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
        const verdict = await this.savedCopyFlags(id, local.dir, options);
        return {
          ...(await readSkill(local.dir, id.path)),
          identity: id.identity,
          revision: 'local',
          stale: false,
          origin: 'local',
          flags: verdict.flags,
          ...(verdict.unchecked ? { verdictUnchecked: verdict.unchecked } : {}),
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
   * resolve answers locally and needs only the hub's verdict on that revision (SPEC 2.8). Without a deadline
   * the batch waits as long as one probe, or as one verdict when it asks only verdicts.
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
        const meta = this.tryReadMeta(id.identity);
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
    const probes = asked.some((item) => item.cached && !item.flagsOnly);
    const timeoutMs =
      options.deadline !== undefined
        ? Math.max(1, options.deadline - Date.now())
        : probes
          ? this.settings.probeTimeoutMs
          : Math.min(this.settings.probeTimeoutMs, FLAGS_TIMEOUT_MS);
    const end = Date.now() + timeoutMs;
    const unreachable = this.hubUnreachable;
    const answers =
      // Verdicts alone are not asked again of a hub this resolver found unreachable.
      unreachable && !probes
        ? Promise.resolve(new ResolveError('offline', unreachable))
        : this.hub()
            .then((hub) => hub.probeBatch(asked, timeoutMs))
            .catch((error: unknown) => {
              // An unreachable hub fails every line at once; any other refusal of the batch (an older hub
              // without the endpoint) leaves each line to its own probe.
              if (error instanceof ResolveError && (error.code === 'offline' || error.code === 'network')) {
                if (error.code === 'offline') this.hubUnreachable ??= error.message;
                return error;
              }
              return new Map<string, BatchAnswer>();
            });
    for (const item of asked) {
      const { id, flagsOnly, savedKey } = item;
      if (savedKey)
        this.savedVerdicts.set(
          savedKey,
          answers.then((all) =>
            this.verdictOf(all instanceof ResolveError ? all : all.get(id.identity), item, end),
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
   * left of the budget. A batch that failed is not asked again.
   */
  private async verdictOf(
    answer: BatchAnswer | ResolveError | undefined,
    question: VerdictQuestion,
    end: number,
  ): Promise<Heard> {
    if (answer instanceof ResolveError) return { why: answer.message };
    if (answer?.status === 'unchanged' && answer.flags) {
      await this.rememberVerdict(question, answer.flags);
      return { flags: answer.flags };
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
      if (flags) this.heard(id, meta);
      return this.fromCache({ ...cached!, meta });
    }
    const meta: CacheEntryMeta = { ...fetched, checkedAt: now };
    const old = cached?.meta;
    if (old?.contentKey && old.contentKey !== fetched.contentKey)
      meta.previous = { revision: old.revision, contentKey: old.contentKey };
    else if (old?.previous) meta.previous = old.previous;
    // Verdicts outlive the revision they were heard on: a copy saved from it is read with them offline.
    const verdicts = this.carriedVerdicts(id, old ?? this.tryReadMeta(id.identity), meta);
    if (verdicts) meta.verdicts = verdicts;
    await this.cache.writeMeta(meta);
    this.heard(id, meta);
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
    if (this.hubUnreachable) return undefined;
    try {
      const hub = await this.hub();
      const answers = await hub.probeBatch(
        [{ id, revision: contentKey }],
        Math.min(this.settings.probeTimeoutMs, FLAGS_TIMEOUT_MS),
      );
      const answer = answers.get(id.identity);
      return answer?.status === 'unchanged' ? answer.flags : undefined;
    } catch (error) {
      if (!(error instanceof ResolveError)) throw error;
      if (error.code === 'offline') this.hubUnreachable ??= error.message;
      return undefined;
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
    if (
      ids.length === 0 ||
      this.hubUnreachable ||
      (options.deadline !== undefined && options.deadline <= Date.now())
    )
      return known;
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
        if (!(error instanceof ResolveError)) throw error;
        if (error.code === 'offline') this.hubUnreachable ??= error.message;
        break;
      }
      for (const [identity, answer] of answers)
        if (answer.status !== 'other' && answer.flags) known.set(identity, answer.flags);
    }
    return known;
  }

  /** The cache entry's metadata, or undefined when there is none or it cannot be read. */
  private tryReadMeta(identity: string): CacheEntryMeta | undefined {
    try {
      return this.cache.readMeta(identity);
    } catch {
      return undefined;
    }
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
      ...(meta.hubWarnings?.length ? { hubWarnings: meta.hubWarnings } : {}),
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

/** What the hub said of a saved revision: its flags, or why it named none. */
interface Heard {
  flags?: string[];
  why?: string;
}

function verdictKey(question: VerdictQuestion): string {
  return `${question.id.identity}\0${question.revision}`;
}

/** How many revisions' verdicts a cache entry keeps besides its own (the oldest heard go first). */
const KEPT_VERDICTS = 32;

/** `verdicts` with `flags` heard last on `revision`. */
function withVerdict(
  verdicts: Readonly<Record<string, string[]>> | undefined,
  revision: string,
  flags: string[],
): Record<string, string[]> {
  // No prototype: a revision is text from a committed `.source` (`rev:__proto__` must stay a plain key).
  const next: Record<string, string[]> = Object.assign(Object.create(null), verdicts);
  delete next[revision];
  next[revision] = flags;
  const names = Object.keys(next);
  for (const name of names.slice(0, Math.max(0, names.length - KEPT_VERDICTS))) delete next[name];
  return next;
}

/** The verdict kept under `revision`, if one was: own keys only, and only a list of flag codes. */
function ownVerdict(
  verdicts: Readonly<Record<string, string[]>> | undefined,
  revision: string,
): string[] | undefined {
  if (!verdicts || !Object.hasOwn(verdicts, revision)) return undefined;
  const flags = verdicts[revision];
  return Array.isArray(flags) && flags.every((flag) => typeof flag === 'string') ? flags : undefined;
}

/** A folder hashed for its git tree sha holds at most this many files and bytes (a skill is far smaller). */
const MAX_TREE_FILES = 5_000;
const MAX_TREE_BYTES = 16 * 1024 * 1024;

/**
 * The git tree id of a local folder, as `git add -A && git write-tree` would record it: regular files are
 * blobs of mode 100755 when their owner may execute them (not on Windows, which has no such bit) and 100644
 * otherwise, symlinks are 120000 blobs of their target, empty folders and `.git` are left out, and so are the
 * top-level names of `skip`. Read synchronously (a skill folder is small); undefined past MAX_TREE_FILES or
 * MAX_TREE_BYTES, or when the folder holds nothing git would keep.
 */
export function gitTreeSha(
  dir: string,
  algorithm: 'sha1' | 'sha256' = 'sha1',
  skip: readonly string[] = [],
): string | undefined {
  let files = 0;
  let bytes = 0;
  const objectId = (type: string, body: Buffer) =>
    createHash(algorithm).update(`${type} ${body.length}\0`).update(body).digest();
  const blob = (body: Buffer) => {
    files += 1;
    bytes += body.length;
    if (files > MAX_TREE_FILES || bytes > MAX_TREE_BYTES) throw new RangeError('too large to hash');
    return objectId('blob', body);
  };
  const tree = (folder: string, top: boolean): Buffer | undefined => {
    const entries: { key: Buffer; line: Buffer }[] = [];
    for (const name of readdirSync(folder)) {
      if (name === '.git' || (top && skip.includes(name))) continue;
      const full = path.join(folder, name);
      const stat = lstatSync(full);
      let mode: string;
      let id: Buffer | undefined;
      if (stat.isSymbolicLink()) {
        mode = '120000';
        id = blob(readlinkSync(full, { encoding: 'buffer' }));
      } else if (stat.isDirectory()) {
        mode = '40000';
        id = tree(full, false);
      } else if (stat.isFile()) {
        mode = process.platform !== 'win32' && stat.mode & 0o100 ? '100755' : '100644';
        id = blob(readFileSync(full));
      } else continue; // sockets, pipes, devices: git keeps none
      if (!id) continue;
      const nameBytes = Buffer.from(name, 'utf8');
      // git orders entries by name bytes, a folder's name as if it ended in "/".
      const key = mode === '40000' ? Buffer.concat([nameBytes, Buffer.from('/')]) : nameBytes;
      entries.push({ key, line: Buffer.concat([Buffer.from(`${mode} `), nameBytes, Buffer.from([0]), id]) });
    }
    if (entries.length === 0) return undefined;
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    return objectId('tree', Buffer.concat(entries.map((e) => e.line)));
  };
  try {
    return tree(dir, true)?.toString('hex');
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
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
