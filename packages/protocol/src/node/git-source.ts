import { cp, mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { formatIdentity, ghParts, githubGitUrl, type Identity } from '../identity.js';
import { lookup, parseLsTree, SKILL_FILE, skillFiles, type TreeEntry } from '../leaf-rule.js';
import type { MenuItem } from '../menu.js';
import { type CacheEntryMeta, isCruft, type SkillCache } from './cache.js';
import { GitError, gitFailureDetail, parseLsRemoteHead, runGit as runGitProcess } from './git.js';
import { overCapFromOffer } from './over-cap.js';
import { ResolveError } from './resolve-error.js';
import type { ClientSettings } from './settings.js';

/** What a fetch produced: cache metadata whose content (for a skill) is already committed to the cache. */
export type FetchedEntry = Omit<CacheEntryMeta, 'checkedAt' | 'previous'>;

/**
 * `gh:` over git with the git binary (SPEC 1.4): `git ls-remote` as the revision probe, and a fetch in three
 * phases - a shallow blob-less no-checkout clone, a K check over `git ls-tree` (tree objects only, so no
 * blob is downloaded before the check), then a sparse checkout of the sub-path only.
 */
export class GitSource {
  constructor(
    private readonly settings: Readonly<ClientSettings>,
    private readonly cache: SkillCache,
  ) {}

  /** `<base>/<owner>/<repo>.git`. */
  repoUrl(id: Identity): string {
    const { owner, repo } = ghParts(id);
    return githubGitUrl(this.settings.gitBase, owner, repo);
  }

  /** The revision probe: the default branch's head commit, without downloading any object. */
  async probe(id: Identity): Promise<string> {
    const out = await runGit(
      ['ls-remote', '--symref', this.repoUrl(id), 'HEAD'],
      this.gitOptions(id, this.settings.probeTimeoutMs),
    );
    const { commit } = parseLsRemoteHead(out);
    if (!commit)
      throw new ResolveError(
        'not-found',
        `${id.identity}: the repository has no default branch (empty repository?).`,
      );
    return commit;
  }

  /**
   * Fetches the identity at the default branch's head (or at `revision`) into the cache. Skill content is
   * keyed by its sub-tree sha, so when the skill did not change its cached files are reused and no blob is
   * downloaded.
   */
  async fetch(id: Identity, options: { revision?: string } = {}): Promise<FetchedEntry> {
    const work = await this.cache.makeTemp();
    try {
      const repoDir = path.join(work, 'repo');
      const revision = await this.shallowTreeOnlyClone(id, repoDir, options.revision);
      const { subpath } = ghParts(id);
      const listing = await this.listTree(id, repoDir, subpath);
      const found = lookup(listing, subpath);
      if (found.kind === 'not-found') {
        throw new ResolveError(
          'not-found',
          `${id.identity}: no folder "${subpath}" in ${ghParts(id).owner}/${ghParts(id).repo}.`,
        );
      }
      if (found.kind === 'refused') {
        const { owner, repo } = ghParts(id);
        const offered = found.subcollections.map((s) => ({
          identity: formatIdentity('gh', `${owner}/${repo}/${s.path}`),
          count: s.skills,
        }));
        throw overCapFromOffer(id.identity, found.count, offered);
      }
      const base: FetchedEntry = {
        version: 1,
        identity: id.identity,
        source: 'gh',
        kind: found.kind,
        revision,
        fetchedAt: new Date().toISOString(),
      };
      if (found.kind === 'menu') {
        return { ...base, items: await this.menuItems(id, repoDir, found.skills) };
      }
      const tree = (
        await this.git(id, repoDir, ['rev-parse', subpath === '' ? 'HEAD^{tree}' : `HEAD:${subpath}`])
      ).trim();
      const contentKey = tree;
      if (!(await this.cache.hasContent(id.identity, contentKey))) {
        // A skill at the repository root is the whole tree; anything else is one cone.
        if (subpath === '')
          await this.git(id, repoDir, ['checkout', '--quiet'], this.settings.fetchTimeoutMs);
        else await this.sparseCheckout(id, repoDir, ['--cone', '--', subpath]);
        const staged = path.join(work, 'content');
        await mkdir(staged);
        for (const file of skillFiles(listing, subpath)) {
          const rel = subpath === '' ? file.path : file.path.slice(subpath.length + 1);
          if (isCruft(rel)) continue;
          await cp(path.join(repoDir, file.path), path.join(staged, rel), {
            verbatimSymlinks: true,
            errorOnExist: false,
          });
        }
        await this.cache.commitContent(id.identity, contentKey, staged);
      }
      const { tryParseSkillMarkdown } = await import('../frontmatter.js');
      const doc = tryParseSkillMarkdown(
        await readFile(path.join(this.cache.contentDir(id.identity, contentKey), SKILL_FILE)),
        path.posix.basename(subpath || ghParts(id).repo),
      );
      return {
        ...base,
        contentKey,
        name: doc.ok ? doc.doc.name : path.posix.basename(subpath || ghParts(id).repo),
        description: doc.ok ? doc.doc.description : '',
      };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Phase 1: commits and trees of one revision, no blobs, no working tree. Returns the commit sha. */
  private async shallowTreeOnlyClone(id: Identity, repoDir: string, revision?: string): Promise<string> {
    const url = this.repoUrl(id);
    const timeout = this.settings.fetchTimeoutMs;
    if (!revision) {
      await runGit(
        ['clone', '--quiet', '--depth', '1', '--filter=blob:none', '--no-checkout', url, repoDir],
        this.gitOptions(id, timeout),
      );
    } else {
      // A pinned revision (re-save compares against it) cannot be cloned by name; fetch it into a fresh repo.
      await runGit(['init', '--quiet', repoDir], this.gitOptions(id, timeout));
      await this.git(id, repoDir, ['remote', 'add', 'origin', url]);
      await this.git(
        id,
        repoDir,
        ['fetch', '--quiet', '--depth', '1', '--filter=blob:none', 'origin', revision],
        timeout,
      );
      await this.git(id, repoDir, ['update-ref', 'refs/heads/pinned', 'FETCH_HEAD']);
      await this.git(id, repoDir, ['symbolic-ref', 'HEAD', 'refs/heads/pinned']);
    }
    return (await this.git(id, repoDir, ['rev-parse', 'HEAD'])).trim();
  }

  /**
   * Phase 2: the listing under the sub-path from tree objects alone (no --long: sizes would need blobs), with
   * the SKILL.md of each folder above it, so that a path inside a skill is not taken for one (SPEC 1.2).
   */
  private async listTree(id: Identity, repoDir: string, subpath: string): Promise<TreeEntry[]> {
    const args = ['ls-tree', '-r', '-t', '-z', 'HEAD'];
    if (subpath !== '') {
      const segments = subpath.split('/');
      const above = segments.map((_, i) => [...segments.slice(0, i), SKILL_FILE].join('/'));
      args.push('--', subpath, ...above);
    }
    // GIT_NO_LAZY_FETCH (git >= 2.45) makes any accidental blob access fail instead of downloading.
    return parseLsTree(
      await this.git(id, repoDir, args, undefined, { GIT_NO_LAZY_FETCH: '1', GIT_LITERAL_PATHSPECS: '1' }),
    );
  }

  /** Phase 3: materialize only what is asked for; checkout downloads the missing blobs in one batch. */
  private async sparseCheckout(
    id: Identity,
    repoDir: string,
    setArgs: string[],
    patterns?: string,
  ): Promise<void> {
    await this.git(id, repoDir, ['sparse-checkout', 'set', ...setArgs], undefined, {}, patterns);
    await this.git(id, repoDir, ['checkout', '--quiet'], this.settings.fetchTimeoutMs);
  }

  /** A menu needs only each skill's SKILL.md (for its description), so only those blobs are fetched. */
  private async menuItems(id: Identity, repoDir: string, skills: string[]): Promise<MenuItem[]> {
    if (skills.length === 0) return [];
    const files = skills.map((s) => (s === '' ? SKILL_FILE : `${s}/${SKILL_FILE}`));
    // Cone mode takes whole folders; exact file patterns need the (older) pattern mode.
    await this.sparseCheckout(
      id,
      repoDir,
      ['--no-cone', '--stdin'],
      files.map((f) => `/${escapePattern(f)}`).join('\n'),
    );
    const { owner, repo } = ghParts(id);
    const { tryParseSkillMarkdown } = await import('../frontmatter.js');
    const items: MenuItem[] = [];
    for (const [i, skill] of skills.entries()) {
      const folder = path.posix.basename(skill || repo);
      let content: Buffer | undefined;
      try {
        content = await readFile(path.join(repoDir, files[i]!));
      } catch {
        content = undefined;
      }
      const doc = content ? tryParseSkillMarkdown(content, folder) : undefined;
      items.push({
        identity: formatIdentity('gh', `${owner}/${repo}${skill === '' ? '' : `/${skill}`}`),
        name: doc?.ok ? doc.doc.name : folder,
        description: doc?.ok ? doc.doc.description : '',
      });
    }
    return items;
  }

  private git(
    id: Identity,
    repoDir: string,
    args: string[],
    timeoutMs = 60_000,
    env: Record<string, string> = {},
    input?: string,
  ): Promise<string> {
    const options = { ...this.gitOptions(id, timeoutMs), cwd: repoDir, env };
    return runGit(args, input === undefined ? options : { ...options, input });
  }

  private gitOptions(id: Identity, timeoutMs: number) {
    const options: { what: string; timeoutMs: number; token?: string } = { what: id.identity, timeoutMs };
    if (this.settings.githubToken) options.token = this.settings.githubToken;
    return options;
  }
}

/** Options of one client git command: what the user waits for (for messages) and how long at most. */
interface ClientGitOptions {
  what: string;
  timeoutMs: number;
  cwd?: string;
  env?: Record<string, string>;
  input?: string;
  token?: string;
}

/**
 * Runs git for the user (the shared runner, reading the user's git configuration: proxies, CA bundles,
 * `url.insteadOf`) and returns its stdout; failures become ResolveErrors.
 */
async function runGit(args: string[], options: ClientGitOptions): Promise<string> {
  const { what, ...run } = options;
  try {
    return (await runGitProcess(args, { ...run, userConfig: true })).toString('utf8');
  } catch (error) {
    throw error instanceof GitError ? gitResolveError(error, what, options.timeoutMs) : error;
  }
}

/** The client's error for a failed git command (each kind maps to one code, so to one exit code). */
export function gitResolveError(error: GitError, what: string, timeoutMs: number): ResolveError {
  const detail = gitFailureDetail(error.stderr);
  const suffix = detail ? ` (git: ${detail})` : '';
  switch (error.kind) {
    case 'unreachable':
      return new ResolveError('offline', `${what}: the git server cannot be reached${suffix}.`);
    case 'timeout':
      return new ResolveError(
        'offline',
        `${what}: the git server did not answer within ${Math.round(timeoutMs / 1000)}s.`,
      );
    case 'access-denied':
      return new ResolveError(
        'no-access',
        `${what}: access refused; set GITHUB_TOKEN for private repositories${suffix}.`,
      );
    case 'not-found':
    case 'ref-not-found':
      return new ResolveError('not-found', `${what}: no such repository${suffix}.`);
    case 'not-started':
      return new ResolveError('network', `Could not run git (${error.message}); is git installed?`);
    default:
      return new ResolveError('network', `${what}: the git server gave a broken answer${suffix}.`);
  }
}

/** Escapes a literal path for a gitignore-style sparse-checkout pattern. */
function escapePattern(p: string): string {
  return p.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/ $/, '\\ ');
}
