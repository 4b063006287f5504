/**
 * A local GitHub for tests, demos and benchmarks: real git over smart HTTP (test/support/git-server.ts)
 * for the bare repositories under `reposRoot`, and the few REST endpoints the crawler calls, shaped as
 * GitHub's OpenAPI description says (@octokit/openapi-types): code search, organization/user repository
 * listings, repository metadata with ETag/304, /rate_limit, and x-ratelimit-* headers. A switch makes the
 * next requests answer 403/429 with Retry-After, for rate-limit tests. Hand-written: no maintained npm
 * package serves both git and a GitHub REST double over a folder of repositories.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { components } from '@octokit/openapi-types';
import { type GitServer, startGitServer } from './git-server.js';
import type { PrivateGithub } from './github-private.js';

const run = promisify(execFile);

type FullRepository = components['schemas']['full-repository'];
type MinimalRepository = components['schemas']['minimal-repository'];
type CodeSearchItem = components['schemas']['code-search-result-item'];

interface SkillFileEntry {
  path: string;
  sha: string;
  size: number;
}

/** A `size:` qualifier as a predicate over byte sizes (undefined when it does not parse). */
function sizeFilter(text: string): ((size: number) => boolean) | undefined {
  const range = /^(\d+)\.\.(\d+|\*)$/.exec(text);
  if (range) {
    const lo = Number(range[1]);
    const hi = range[2] === '*' ? Number.POSITIVE_INFINITY : Number(range[2]);
    return (size) => size >= lo && size <= hi;
  }
  const compare = /^(>=|<=|>|<)?(\d+)$/.exec(text);
  if (!compare) return undefined;
  const n = Number(compare[2]);
  switch (compare[1]) {
    case '>':
      return (size) => size > n;
    case '>=':
      return (size) => size >= n;
    case '<':
      return (size) => size < n;
    case '<=':
      return (size) => size <= n;
    default:
      return (size) => size === n;
  }
}

/** A `path:` qualifier: the file lies in that folder or below it (`/` is the repository root only). */
function inPath(file: string, prefix: string | undefined): boolean {
  if (prefix === undefined) return true;
  const folder = path.posix.dirname(file);
  if (prefix === '/') return folder === '.';
  const want = prefix.replace(/^\/+|\/+$/g, '').toLowerCase();
  const have = folder.toLowerCase();
  return have === want || have.startsWith(`${want}/`);
}

/** The fields of a repository answer this stand-in fills in (a subset of full-repository). */
type RepositoryAnswer = Pick<
  FullRepository,
  | 'id'
  | 'node_id'
  | 'name'
  | 'full_name'
  | 'private'
  | 'html_url'
  | 'description'
  | 'fork'
  | 'url'
  | 'default_branch'
  | 'stargazers_count'
  | 'watchers_count'
  | 'forks_count'
  | 'open_issues_count'
  | 'archived'
  | 'disabled'
  | 'topics'
  | 'pushed_at'
  | 'created_at'
  | 'updated_at'
  | 'visibility'
  | 'size'
> & {
  owner: { login: string; id: number; type: string };
  license: { key: string; name: string; spdx_id: string } | null;
};

export interface ApiRequestLog {
  /** When the request arrived (performance.now(), ms). */
  at: number;
  method: string;
  path: string;
  status: number;
  ifNoneMatch?: string;
  authorization?: string;
}

export interface GithubStandinOptions {
  /** Folder holding `<owner>/<repo>.git` bare repositories (buildCorpusRepos() output or createRepo()'s root). */
  reposRoot: string;
  /** A corpus folder laid out like ../shared/corpus/repos; its meta.json files supply licence and branch. */
  corpusDir?: string;
  /** Port of the REST API (0 = any free port). */
  port?: number;
  /** Port of the git server (0 = any free port). */
  gitPort?: number;
  /** Results a search query can reach (GitHub: 1,000); tests of small corpora may lower it. */
  searchResultCap?: number;
  /** Private repositories, tokens and the GitHub App (test/support/github-private.ts); none by default. */
  private?: PrivateGithub;
}

export interface RateLimitAnswer {
  status: 403 | 429;
  /** Seconds, sent as Retry-After. */
  retryAfter: number;
  /** How many requests get this answer. */
  times: number;
  /** Only requests whose path starts with this (default: every API request). */
  pathPrefix?: string;
}

/** A fault injected into one repository's git traffic. */
export type GitFault =
  | { kind: 'hang' }
  /** Answer `status` to every request after the first `after` requests (e.g. 404 after the probe). */
  | { kind: 'status'; status: number; after?: number };

export interface GithubStandin {
  /** GITHUB_API_URL for the crawler. */
  apiUrl: string;
  /** GIT_BASE_URL for the crawler. */
  gitUrl: string;
  git: GitServer;
  apiLog: ApiRequestLog[];
  /** Answer the next requests with a rate-limit error. */
  rateLimitNext(answer: RateLimitAnswer): void;
  /** Injects (or with null removes) a fault into one repository's git traffic. */
  setGitFault(fullName: string, fault: GitFault | null): void;
  /** Overrides metadata of a repository (stars, archived, topics, description, ...). */
  setMetadata(fullName: string, patch: Partial<RepositoryAnswer>): void;
  /**
   * Renames or transfers a repository as GitHub does: the bare repository moves, and the old name answers
   * `301` (REST: to `/repositories/<id>`; git: to the new path) until a repository is made at the old name.
   */
  renameRepository(from: string, to: string): Promise<void>;
  /**
   * GitHub's numeric id of a repository: fixed when the stand-in first sees the name, and kept by renames
   * and transfers (`GET /repositories/<id>` answers the current name).
   */
  idOf(fullName: string): number;
  /**
   * Makes a repository private (or public again) in its REST answer (`private`, `visibility`) while the
   * stand-in keeps serving it: the hub's token can read it, as a token of an organization member would.
   */
  setPrivate(fullName: string, isPrivate: boolean): void;
  /** Deletes a repository: its name and id answer 404 from now on. */
  deleteRepository(fullName: string): Promise<void>;
  /** The next `times` search answers drop part of their page and say `incomplete_results: true`. */
  searchIncompleteNext(times: number): void;
  close(): Promise<void>;
}

/** Every `<owner>/<repo>` with a bare repository under `root`. */
export async function listBareRepos(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const owner of await readdir(root, { withFileTypes: true })) {
    if (!owner.isDirectory() || owner.name.startsWith('.')) continue;
    for (const repo of await readdir(path.join(root, owner.name), { withFileTypes: true })) {
      if (repo.isDirectory() && repo.name.endsWith('.git'))
        out.push(`${owner.name}/${repo.name.slice(0, -4)}`);
    }
  }
  return out.sort();
}

function stableNumber(text: string, modulo: number): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) % modulo;
}

async function gitIn(dir: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd: dir,
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout;
}

/** Starts the stand-in (REST API and git server). */
export async function startGithubStandin(options: GithubStandinOptions): Promise<GithubStandin> {
  const privateSide = options.private;
  const git = await startGitServer({
    root: options.reposRoot,
    port: 0,
    ...(privateSide ? { authorize: (repo, auth) => privateSide.gitVerdict(repo, auth) } : {}),
  });
  // As on GitHub, an old name's git redirect ends once a repository is made at that name.
  const gitProxy = await startGitFaultProxy(git.baseUrl, options.gitPort ?? 0, (fullName) =>
    existsSync(path.join(options.reposRoot, `${fullName}.git`)),
  );
  const apiLog: ApiRequestLog[] = [];
  const overrides = new Map<string, Partial<RepositoryAnswer>>();
  let limited: (RateLimitAnswer & { left: number }) | null = null;
  let apiUrl = '';
  const renames = new Map<string, string>();
  /** Ids of repositories that were renamed or transferred (by lower-case current name); others hash their name. */
  const movedIds = new Map<string, number>();
  /** How many repositories left a name (renamed away or deleted): one made there later is a new repository. */
  const vacated = new Map<string, number>();
  const idOf = (fullName: string) => {
    const key = fullName.toLowerCase();
    const generation = vacated.get(key) ?? 0;
    return movedIds.get(key) ?? stableNumber(generation ? `${key}#${generation}` : key, 1_000_000_000);
  };
  const searchCap = options.searchResultCap ?? 1000;
  let incompleteLeft = 0;

  const repoDir = (fullName: string) => path.join(options.reposRoot, `${fullName}.git`);
  const findRepo = async (owner: string, name: string): Promise<string | null> => {
    // The spelling asked for usually exists as is; listing every repository is the case-insensitive fallback.
    if (existsSync(repoDir(`${owner}/${name}`))) return `${owner}/${name}`;
    const all = await listBareRepos(options.reposRoot);
    return all.find((r) => r.toLowerCase() === `${owner}/${name}`.toLowerCase()) ?? null;
  };

  const heads = new Map<string, { ref: string; sha: string; pushed: string }>();
  /**
   * The default branch, head sha and head commit date of a bare repository: the refs are read from the
   * files (no process per metadata answer); the commit date takes one git call per new head.
   */
  async function headOf(dir: string): Promise<{ branch: string; head: string; pushed: string }> {
    const symbolic = (await readFile(path.join(dir, 'HEAD'), 'utf8').catch(() => '')).trim();
    const ref = symbolic.startsWith('ref: ') ? symbolic.slice(5) : 'refs/heads/main';
    const branch = ref.replace(/^refs\/heads\//, '');
    let sha = (await readFile(path.join(dir, ref), 'utf8').catch(() => '')).trim();
    if (!sha) {
      const packed = await readFile(path.join(dir, 'packed-refs'), 'utf8').catch(() => '');
      sha =
        packed
          .split('\n')
          .find((line) => line.endsWith(` ${ref}`))
          ?.split(' ')[0] ?? '';
    }
    if (!sha) return { branch, head: '', pushed: '' };
    const cached = heads.get(dir);
    if (cached && cached.ref === ref && cached.sha === sha)
      return { branch, head: sha, pushed: cached.pushed };
    const pushed = (await gitIn(dir, ['log', '-1', '--format=%cI', sha]).catch(() => '')).trim();
    heads.set(dir, { ref, sha, pushed });
    return { branch, head: sha, pushed };
  }

  /** The REST answer for a repository, and the sha of its head (what the ETag follows, see below). */
  async function repositoryAnswer(fullName: string): Promise<{ answer: RepositoryAnswer; head: string }> {
    const [owner = '', name = ''] = fullName.split('/');
    const dir = repoDir(fullName);
    let meta: { license_spdx?: string | null; default_branch?: string } = {};
    const metaFile = options.corpusDir ? path.join(options.corpusDir, fullName, 'meta.json') : '';
    if (metaFile && existsSync(metaFile)) meta = JSON.parse(await readFile(metaFile, 'utf8'));
    const { branch, head, pushed } = await headOf(dir);
    const id = idOf(fullName);
    const spdx = meta.license_spdx ?? null;
    const answer: RepositoryAnswer = {
      id,
      node_id: `R_${id}`,
      name,
      full_name: fullName,
      owner: { login: owner, id: stableNumber(owner.toLowerCase(), 1_000_000_000), type: 'Organization' },
      private: privateSide?.isPrivate(fullName) ?? false,
      html_url: `${gitProxy.baseUrl}/${fullName}`,
      description: null,
      fork: false,
      url: `${apiUrl}/repos/${fullName}`,
      default_branch: meta.default_branch ?? branch,
      // Deterministic popularity so ranking by stars has something to work with.
      stargazers_count: stableNumber(`stars:${fullName}`, 5000),
      watchers_count: 0,
      forks_count: 0,
      open_issues_count: 0,
      license: spdx ? { key: spdx.toLowerCase(), name: spdx, spdx_id: spdx } : null,
      archived: false,
      disabled: false,
      topics: [],
      pushed_at: pushed || '2026-01-01T00:00:00Z',
      created_at: '2025-01-01T00:00:00Z',
      updated_at: pushed || '2026-01-01T00:00:00Z',
      visibility: privateSide?.isPrivate(fullName) ? 'private' : 'public',
      size: 0,
    };
    return { answer: { ...answer, ...overrides.get(fullName.toLowerCase()) }, head };
  }

  const minimal = (r: RepositoryAnswer) =>
    ({
      id: r.id,
      node_id: r.node_id,
      name: r.name,
      full_name: r.full_name,
      owner: r.owner,
      private: r.private,
      html_url: r.html_url,
      description: r.description,
      fork: r.fork,
      url: r.url,
      archived: r.archived,
      default_branch: r.default_branch,
      stargazers_count: r.stargazers_count,
      pushed_at: r.pushed_at,
    }) as unknown as MinimalRepository;

  const skillFileCache = new Map<string, { head: string; files: SkillFileEntry[] }>();
  /** The SKILL.md files of a repository's head with their sizes (cached per head). */
  async function skillFilesOf(fullName: string): Promise<SkillFileEntry[]> {
    const dir = repoDir(fullName);
    const { head } = await headOf(dir);
    const cached = skillFileCache.get(fullName);
    if (cached && cached.head === head) return cached.files;
    const out = head ? await gitIn(dir, ['ls-tree', '-r', '-l', '-z', 'HEAD']).catch(() => '') : '';
    const files = out
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf('\t');
        const [, type = '', sha = '', size = '0'] = line.slice(0, tab).split(/ +/);
        return { path: line.slice(tab + 1), type, sha, size: Number(size) || 0 };
      })
      // GitHub's filename: qualifier matches case-insensitively.
      .filter((e) => e.type === 'blob' && /(^|\/)skill\.md$/i.test(e.path))
      .map(({ path, sha, size }) => ({ path, sha, size }));
    skillFileCache.set(fullName, { head, files });
    return files;
  }

  function send(
    res: ServerResponse,
    entry: ApiRequestLog,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    entry.status = status;
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4999',
      'x-ratelimit-used': '1',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-ratelimit-resource': 'core',
      'x-github-api-version-selected': '2022-11-28',
      ...headers,
    });
    res.end(status === 304 ? undefined : text);
  }

  function paginate<T>(url: URL, items: T[], cap = Number.POSITIVE_INFINITY): { page: T[]; link?: string } {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
    const pageNo = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const last = Math.max(1, Math.ceil(Math.min(items.length, cap) / perPage));
    const links: string[] = [];
    const at = (n: number) => {
      const u = new URL(url.toString());
      u.searchParams.set('page', String(n));
      u.searchParams.set('per_page', String(perPage));
      return `${apiUrl}${u.pathname}${u.search}`;
    };
    if (pageNo < last) links.push(`<${at(pageNo + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
    if (pageNo > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(pageNo - 1)}>; rel="prev"`);
    return {
      page: items.slice((pageNo - 1) * perPage, pageNo * perPage),
      link: links.length ? links.join(', ') : undefined,
    };
  }

  /** GET /repos answer with the ETag GitHub would send; a matching If-None-Match is a 304. */
  async function sendRepository(res: ServerResponse, entry: ApiRequestLog, fullName: string) {
    const { answer: body, head } = await repositoryAnswer(fullName);
    // On GitHub a push changes `pushed_at` and with it the ETag. Here `pushed_at` is the head commit's
    // date, which a rewritten or back-dated commit keeps, so the head itself goes into the ETag too.
    const etag = `W/"${createHash('sha256').update(JSON.stringify(body)).update(head).digest('hex').slice(0, 32)}"`;
    // A matching conditional request answers 304 and (as on GitHub) does not count against the limit.
    if (entry.ifNoneMatch === etag) return send(res, entry, 304, undefined, { etag });
    return send(res, entry, 200, body, { etag });
  }

  /** GitHub's answer for a renamed or transferred repository's old name. */
  function sendMoved(res: ServerResponse, entry: ApiRequestLog, movedTo: string) {
    const location = `${apiUrl}/repositories/${idOf(movedTo)}`;
    return send(
      res,
      entry,
      301,
      {
        message: 'Moved Permanently',
        url: location,
        documentation_url:
          'https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects',
      },
      { location },
    );
  }

  async function repoById(id: number): Promise<string | undefined> {
    return (await listBareRepos(options.reposRoot)).find((r) => idOf(r) === id);
  }

  /**
   * Code search over the SKILL.md files, with the qualifiers discovery splits by: `filename:SKILL.md`
   * (required), `size:` (N, N..M, >N, >=N, <N, <=N: bytes), `path:` (a folder prefix, `/` for the root),
   * `user:`/`org:`/`repo:`. A string is a validation failure.
   */
  async function codeSearchItems(
    q: string,
    readable: (fullName: string) => boolean,
  ): Promise<CodeSearchItem[] | string> {
    if (!/(^|\s)filename:skill\.md(\s|$)/i.test(q)) return 'this stand-in only answers filename:SKILL.md';
    const size = /(?:^|\s)size:(\S+)/.exec(q)?.[1];
    const inSize = size ? sizeFilter(size) : () => true;
    if (!inSize) return `bad size qualifier "${size}"`;
    const pathPrefix = /(?:^|\s)path:(\S+)/.exec(q)?.[1];
    const owner = /(?:^|\s)(?:user|org):(\S+)/.exec(q)?.[1]?.toLowerCase();
    const repoName = /(?:^|\s)repo:(\S+)/.exec(q)?.[1]?.toLowerCase();
    const items: CodeSearchItem[] = [];
    for (const name of await listBareRepos(options.reposRoot)) {
      if (!readable(name)) continue;
      if (owner && name.split('/')[0]!.toLowerCase() !== owner) continue;
      if (repoName && name.toLowerCase() !== repoName) continue;
      const repo = minimal((await repositoryAnswer(name)).answer);
      for (const file of await skillFilesOf(name)) {
        if (!inSize(file.size) || !inPath(file.path, pathPrefix)) continue;
        items.push({
          name: path.posix.basename(file.path),
          path: file.path,
          sha: file.sha,
          url: `${apiUrl}/repos/${name}/contents/${file.path}`,
          git_url: `${apiUrl}/repos/${name}/git/blobs/${file.sha}`,
          html_url: `${gitProxy.baseUrl}/${name}/blob/HEAD/${file.path}`,
          repository: repo,
          score: 1,
        });
      }
    }
    return items;
  }

  /** Repository search by `topic:` (the topics set with setMetadata). */
  async function repositorySearchItems(
    q: string,
    readable: (fullName: string) => boolean,
  ): Promise<MinimalRepository[] | string> {
    const topics = [...q.matchAll(/(?:^|\s)topic:(\S+)/g)].map((m) => m[1]!.toLowerCase());
    if (topics.length === 0) return 'this stand-in only answers topic: queries';
    const out: MinimalRepository[] = [];
    for (const name of await listBareRepos(options.reposRoot)) {
      if (!readable(name)) continue;
      const { answer } = await repositoryAnswer(name);
      const held = new Set((answer.topics ?? []).map((t) => t.toLowerCase()));
      if (topics.every((t) => held.has(t))) out.push(minimal(answer));
    }
    return out;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const entry: ApiRequestLog = {
      at: performance.now(),
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      status: 0,
      ifNoneMatch: req.headers['if-none-match'] as string | undefined,
      authorization: req.headers.authorization,
    };
    apiLog.push(entry);
    if (limited && limited.left > 0 && (!limited.pathPrefix || url.pathname.startsWith(limited.pathPrefix))) {
      limited.left--;
      const secondary = limited.status === 403;
      return send(
        res,
        entry,
        limited.status,
        {
          message: secondary
            ? 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.'
            : 'API rate limit exceeded',
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
        },
        {
          'retry-after': String(limited.retryAfter),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + limited.retryAfter),
        },
      );
    }
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const authorization = req.headers.authorization;
    if (privateSide) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const app = privateSide.handleAppRoute(
        req.method ?? 'GET',
        parts,
        authorization,
        Buffer.concat(chunks).toString('utf8'),
      );
      if (app) return send(res, entry, app.status, app.body);
      if (privateSide.badCredentials(authorization)) {
        return send(res, entry, 401, {
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
        });
      }
    }
    // Private repositories are invisible without credentials that cover them, exactly like missing ones.
    const readable = (fullName: string) => privateSide?.canRead(fullName, authorization) ?? true;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, entry, 404, { message: 'Not Found' });

    if (parts[0] === 'rate_limit' && parts.length === 1) {
      const reset = Math.floor(Date.now() / 1000) + 3600;
      const core = { limit: 5000, remaining: 4999, used: 1, reset };
      return send(res, entry, 200, {
        resources: { core, search: { ...core, limit: 30, remaining: 30 } },
        rate: core,
      });
    }
    if (parts[0] === 'repositories' && parts.length === 2) {
      const found = await repoById(Number(parts[1]));
      if (!found || !readable(found)) return send(res, entry, 404, { message: 'Not Found' });
      return sendRepository(res, entry, found);
    }
    if (parts[0] === 'repos' && parts.length === 3) {
      const found = await findRepo(parts[1]!, parts[2]!);
      const movedTo = found ? undefined : renames.get(`${parts[1]}/${parts[2]}`.toLowerCase());
      if (movedTo) return sendMoved(res, entry, movedTo);
      if (!found || !readable(found))
        return send(res, entry, 404, {
          message: 'Not Found',
          documentation_url: 'https://docs.github.com/rest/repos/repos#get-a-repository',
        });
      return sendRepository(res, entry, found);
    }
    if ((parts[0] === 'orgs' || parts[0] === 'users') && parts[2] === 'repos' && parts.length === 3) {
      const owner = parts[1]!.toLowerCase();
      const names = (await listBareRepos(options.reposRoot)).filter(
        (r) => r.split('/')[0]!.toLowerCase() === owner && readable(r),
      );
      if (names.length === 0) return send(res, entry, 404, { message: 'Not Found' });
      const repos = await Promise.all(names.map(async (n) => minimal((await repositoryAnswer(n)).answer)));
      const { page, link } = paginate(url, repos);
      return send(res, entry, 200, page, link ? { link } : {});
    }
    if (parts[0] === 'search' && (parts[1] === 'code' || parts[1] === 'repositories') && parts.length === 2) {
      const q = url.searchParams.get('q') ?? '';
      const items =
        parts[1] === 'code' ? await codeSearchItems(q, readable) : await repositorySearchItems(q, readable);
      if (typeof items === 'string') {
        return send(res, entry, 422, { message: 'Validation Failed', errors: [{ message: items }] });
      }
      const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
      const pageNo = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      // As GitHub: whatever total_count says, only the first `searchCap` results can be paged to.
      if ((pageNo - 1) * perPage >= searchCap) {
        return send(res, entry, 422, {
          message: `Only the first ${searchCap} search results are available`,
          documentation_url: 'https://docs.github.com/v3/search/',
        });
      }
      const paged = paginate<CodeSearchItem | MinimalRepository>(url, items, searchCap);
      const link = paged.link;
      let page = paged.page;
      page = page.slice(0, Math.max(0, searchCap - (pageNo - 1) * perPage));
      let incomplete = false;
      if (incompleteLeft > 0 && page.length > 1) {
        // GitHub's search timed out: part of the page is missing, and the answer says so.
        incompleteLeft--;
        incomplete = true;
        page = page.slice(0, Math.ceil(page.length / 2));
      }
      return send(
        res,
        entry,
        200,
        { total_count: items.length, incomplete_results: incomplete, items: page },
        { 'x-ratelimit-resource': 'search', ...(link ? { link } : {}) },
      );
    }
    return send(res, entry, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl,
    gitUrl: gitProxy.baseUrl,
    git,
    apiLog,
    rateLimitNext(answer) {
      limited = { ...answer, left: answer.times };
    },
    setGitFault(fullName, fault) {
      gitProxy.setFault(fullName, fault);
    },
    setMetadata(fullName, patch) {
      overrides.set(fullName.toLowerCase(), { ...overrides.get(fullName.toLowerCase()), ...patch });
    },
    async renameRepository(from, to) {
      const source = await findRepo(...(from.split('/') as [string, string]));
      if (!source) throw new Error(`no repository ${from}`);
      const id = idOf(source);
      movedIds.delete(source.toLowerCase());
      vacated.set(source.toLowerCase(), (vacated.get(source.toLowerCase()) ?? 0) + 1);
      movedIds.set(to.toLowerCase(), id);
      await mkdir(path.dirname(repoDir(to)), { recursive: true });
      await rename(repoDir(source), repoDir(to));
      const override = overrides.get(source.toLowerCase());
      if (override) overrides.set(to.toLowerCase(), override);
      overrides.delete(source.toLowerCase());
      // Earlier names now lead here too; a repository made at the new name again would end its redirect.
      for (const [old, target] of renames)
        if (target.toLowerCase() === source.toLowerCase()) renames.set(old, to);
      renames.delete(to.toLowerCase());
      renames.set(source.toLowerCase(), to);
      gitProxy.setRedirect(source, to);
    },
    idOf,
    setPrivate(fullName, isPrivate) {
      const key = fullName.toLowerCase();
      overrides.set(key, {
        ...overrides.get(key),
        private: isPrivate,
        visibility: isPrivate ? 'private' : 'public',
      });
    },
    async deleteRepository(fullName) {
      const source = await findRepo(...(fullName.split('/') as [string, string]));
      if (!source) throw new Error(`no repository ${fullName}`);
      await rm(repoDir(source), { recursive: true, force: true });
      movedIds.delete(source.toLowerCase());
      vacated.set(source.toLowerCase(), (vacated.get(source.toLowerCase()) ?? 0) + 1);
      for (const [old, target] of renames)
        if (target.toLowerCase() === source.toLowerCase()) renames.delete(old);
    },
    searchIncompleteNext(times) {
      incompleteLeft = times;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gitProxy.close();
      await git.close();
    },
  };
}

/**
 * A pass-through proxy in front of the git server that can make one repository hang or fail while the
 * others are served normally (the git server's own switches act on every repository at once).
 */
async function startGitFaultProxy(target: string, port: number, exists: (fullName: string) => boolean) {
  const faults = new Map<string, GitFault & { seen: number }>();
  const redirects = new Map<string, string>();
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const match = /^\/([^/]+)\/([^/]+?)(?:\.git)?\//.exec(decodeURIComponent(req.url ?? '/'));
    const movedTo =
      match && !exists(`${match[1]}/${match[2]}`)
        ? redirects.get(`${match[1]}/${match[2]}`.toLowerCase())
        : undefined;
    if (match && movedTo) {
      // As GitHub: git traffic for an old name is redirected to the new one (git follows it on the first request).
      const rest = decodeURIComponent(req.url ?? '/').slice(match[0].length - 1);
      res.writeHead(301, { location: `/${movedTo}.git${rest}` }).end();
      return;
    }
    const fault = match ? faults.get(`${match[1]}/${match[2]}`.toLowerCase()) : undefined;
    if (fault) {
      fault.seen++;
      if (fault.kind === 'hang') return; // never answer; the socket is destroyed on close
      if (fault.seen > (fault.after ?? 0)) {
        res.writeHead(fault.status, { 'content-type': 'text/plain' }).end('injected failure\n');
        return;
      }
    }
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setRedirect(from: string, to: string) {
      for (const [old, target] of redirects)
        if (target.toLowerCase() === from.toLowerCase()) redirects.set(old, to);
      redirects.delete(to.toLowerCase());
      redirects.set(from.toLowerCase(), to);
    },
    setFault(fullName: string, fault: GitFault | null) {
      if (fault) faults.set(fullName.toLowerCase(), { ...fault, seen: 0 });
      else faults.delete(fullName.toLowerCase());
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
