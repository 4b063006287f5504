import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseLsTree, type TreeEntry } from '@atskills/protocol';
import {
  GitError,
  parseLsRemoteHead,
  type RunGitOptions,
  runGit as runGitProcess,
} from '@atskills/protocol/node';

// Every git command of the crawler runs isolated from the machine's git configuration (the shared runner's
// default) with these settings on top.
const CRAWLER_GIT_CONFIG: [string, string][] = [
  // Keep every pack as a pack: the crawler measures bytes downloaded from pack sizes.
  ['fetch.unpackLimit', '1'],
  ['transfer.unpackLimit', '1'],
  // A server that trickles or stalls is given up on by git itself, well before the job timeout.
  ['http.lowSpeedLimit', '1'],
  ['http.lowSpeedTime', '60'],
  ['protocol.version', '2'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

function runGit(args: string[], options: RunGitOptions = {}): Promise<Buffer> {
  return runGitProcess(args, { ...options, config: CRAWLER_GIT_CONFIG });
}

/** What `git ls-remote` says the repository's head is; null commit for an empty repository. */
export interface RemoteHead {
  commit: string | null;
  /** The default branch (`main`), from the HEAD symref. */
  branch: string | null;
}

export interface RemoteOptions {
  token?: string;
  signal?: AbortSignal;
}

/** Probes the head of a remote repository without downloading anything (one ls-refs request). */
export async function probeHead(url: string, options: RemoteOptions = {}): Promise<RemoteHead> {
  const out = await runGit(['ls-remote', '--symref', url, 'HEAD'], options);
  return parseLsRemoteHead(out.toString('utf8'));
}

/** A blob of a skill folder as read from git. */
export interface GitBlob {
  sha: string;
  content: Buffer;
}

/**
 * The crawler's view of one remote repository, in a private temporary folder: a shallow, blobless
 * copy of the head (commit and trees only: enough for `ls-tree` and the leaf rule), and a second
 * empty repository into which only the skill folders' blobs under the size limit are fetched.
 *
 * Why two repositories: wanting a tree with `--filter=blob:limit=N` makes the server send that
 * folder's blobs under N in one pack (nothing per file), but git skips wants it already has, and the
 * blobless copy has every tree. Explicitly wanted blobs would ignore the filter, so wanting trees is
 * also how files over the limit are never downloaded at all.
 */
export class RemoteSnapshot {
  private constructor(
    readonly url: string,
    readonly dir: string,
    private readonly options: RemoteOptions,
  ) {}

  /** Creates the private working folder (remove it with dispose()). */
  static async open(
    url: string,
    options: RemoteOptions & { workDir?: string } = {},
  ): Promise<RemoteSnapshot> {
    const dir = await mkdtemp(path.join(options.workDir ?? tmpdir(), 'atskills-crawl-'));
    return new RemoteSnapshot(url, dir, options);
  }

  private get treesRepo() {
    return path.join(this.dir, 'trees.git');
  }

  private get blobsRepo() {
    return path.join(this.dir, 'blobs.git');
  }

  private git(args: string[], cwd: string, extra: Partial<RunGitOptions> = {}) {
    return runGit(args, { cwd, token: this.options.token, signal: this.options.signal, ...extra });
  }

  /**
   * An empty bare repository with `origin`, written as files: what `git init --bare` and `git remote add`
   * leave that fetch needs (HEAD, objects/, refs/, the config), without two processes per repository. A
   * process costs more than its run here: Node forks the whole crawler to start one, page tables and all.
   */
  private async initRepo(repo: string) {
    await mkdir(path.join(repo, 'objects', 'pack'), { recursive: true });
    await mkdir(path.join(repo, 'refs', 'heads'), { recursive: true });
    await writeFile(path.join(repo, 'HEAD'), 'ref: refs/heads/main\n');
    const quoted = this.url.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    await writeFile(
      path.join(repo, 'config'),
      '[core]\n\trepositoryformatversion = 0\n\tbare = true\n' +
        `[remote "origin"]\n\turl = "${quoted}"\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`,
    );
  }

  /** Whether the cloned copy has a commit, from its files (a clone writes its refs as files). */
  private async hasCommit(): Promise<boolean> {
    const head = (await readFile(path.join(this.treesRepo, 'HEAD'), 'utf8').catch(() => '')).trim();
    if (!head.startsWith('ref: ')) return /^[0-9a-f]{40,64}$/.test(head);
    const ref = head.slice('ref: '.length);
    if (
      await stat(path.join(this.treesRepo, ref)).then(
        () => true,
        () => false,
      )
    )
      return true;
    const packed = await readFile(path.join(this.treesRepo, 'packed-refs'), 'utf8').catch(() => '');
    return packed.split('\n').some((line) => line.endsWith(` ${ref}`));
  }

  /**
   * Fetches the commit and every tree of `branch` (null: the remote's HEAD), no blobs, depth 1, in one
   * `git clone`. Returns the commit actually fetched (the head may have moved since the probe), its root
   * tree and the branch.
   */
  async fetchTrees(
    branch: string | null,
  ): Promise<{ commit: string; rootTree: string; branch: string | null } | { commit: null }> {
    const args = ['clone', '-q', '--bare', '--no-tags', '--depth=1', '--filter=blob:none'];
    if (branch) args.push('--branch', branch);
    await runGit([...args, '--', this.url, this.treesRepo], {
      token: this.options.token,
      signal: this.options.signal,
    });
    // Cloning an empty repository succeeds with no commit at all.
    if (!(await this.hasCommit())) return { commit: null };
    const out = await this.git(
      ['rev-parse', 'HEAD', 'HEAD^{tree}', '--symbolic-full-name', 'HEAD'],
      this.treesRepo,
    );
    const [commit = '', rootTree = '', ref = ''] = out.toString('utf8').trim().split('\n');
    return {
      commit,
      rootTree,
      branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : branch,
    };
  }

  /**
   * Every entry of the fetched head, trees included (`-t`), without sizes: `-l` would fetch every blob
   * lazily one request at a time, so lazy fetching is disabled outright.
   */
  async listTree(): Promise<TreeEntry[]> {
    const out = await this.git(['ls-tree', '-r', '-t', '-z', '--full-tree', 'HEAD'], this.treesRepo, {
      env: { GIT_NO_LAZY_FETCH: '1' },
    });
    return parseLsTree(out.toString('utf8'));
  }

  /**
   * Downloads the blobs under the given folder trees, skipping blobs over `maxBytes`, in batches of
   * `batchSize` trees per request. Returns every blob that arrived, by sha.
   */
  async fetchFolderBlobs(
    treeShas: string[],
    maxBytes: number,
    batchSize = 400,
  ): Promise<Map<string, Buffer>> {
    const blobs = new Map<string, Buffer>();
    if (treeShas.length === 0) return blobs;
    await this.initRepo(this.blobsRepo);
    const unique = [...new Set(treeShas)];
    for (let i = 0; i < unique.length; i += batchSize) {
      const batch = unique.slice(i, i + batchSize);
      await this.git(
        [
          'fetch',
          '-q',
          '--no-tags',
          '--no-write-fetch-head',
          `--filter=blob:limit=${maxBytes + 1}`,
          '--stdin',
          'origin',
        ],
        this.blobsRepo,
        { input: `${batch.join('\n')}\n` },
      );
    }
    // The blobs repository holds only what was just fetched, so dumping all of it is exact and one pass.
    const out = await this.git(
      ['cat-file', '--batch-all-objects', '--unordered', '--batch=%(objectname) %(objecttype) %(objectsize)'],
      this.blobsRepo,
      { env: { GIT_NO_LAZY_FETCH: '1' } },
    );
    let at = 0;
    while (at < out.length) {
      const newline = out.indexOf(10, at);
      if (newline < 0) break;
      const [sha = '', type, sizeText] = out.subarray(at, newline).toString('latin1').split(' ');
      const size = Number(sizeText);
      if (!Number.isInteger(size)) throw new GitError('other', `unexpected cat-file output for ${sha}`);
      const start = newline + 1;
      if (type === 'blob') blobs.set(sha, Buffer.from(out.subarray(start, start + size)));
      at = start + size + 1;
    }
    return blobs;
  }

  /** Bytes of every pack downloaded so far (trees and blobs): what the crawl cost on the wire, near enough. */
  async bytesDownloaded(): Promise<number> {
    let total = 0;
    for (const repo of [this.treesRepo, this.blobsRepo]) {
      const packDir = path.join(repo, 'objects', 'pack');
      let names: string[] = [];
      try {
        names = await readdir(packDir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (name.endsWith('.pack')) total += (await stat(path.join(packDir, name))).size;
      }
    }
    return total;
  }

  /** Removes the working folder. */
  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
