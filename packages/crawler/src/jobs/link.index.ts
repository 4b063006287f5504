import {
  type Database,
  findLinkById,
  type LinkedSkill,
  type LinkWithNames,
  recordLinkFailure,
  setLinkInstallation,
  setLinkRepositoryId,
  setLinkStatus,
  storedLinkedSkills,
  writeLinkIndex,
} from '@atskills/db';
import { type LinkAccess, LinkAccessError } from '@atskills/github-auth';
import { formatIdentity, githubGitUrl, type TreeEntry } from '@atskills/protocol';
import { GitError } from '@atskills/protocol/node';
import type { Logger } from 'pino';
import type { CrawlerSettings } from '../config.js';
import { ContentPool } from '../content/content-pool.js';
import type { RemoteSnapshot } from '../git/remote-snapshot.js';
import { RateLimitedError } from '../github/rate-limited-error.js';
import { pipelineRun } from '../pipeline/pipeline-run.js';
import { type IndexedFolder, indexSkillFolder } from '../pipeline/skill-folder-pipeline.js';
import { abortedByShutdown } from '../shutdown.js';
import type { JobContext } from './job-context.js';

/**
 * The file an App-linked repository folder must hold, naming the hub teams its owners allow to link it
 * (one `hub:<team>` or `hub:<team>/<collection>` per line). The App is installed by the repository's
 * owners, not by the team that links: without this, any team could link any repository the App can read.
 * A token link needs none: whoever holds a token that reads the repository can read it anyway.
 */
export const LINK_MARKER_FILE = '.atskills-link';

/** What a link index needs (passed in; nothing is read from globals). */
export interface LinkIndexDeps {
  db: Database;
  settings: Pick<CrawlerSettings, 'gitBaseUrl' | 'crawlMaxFileBytes' | 'crawlWorkDir'>;
  access: LinkAccess;
  logger: Logger;
  /** The processes that parse, count tokens and scan (the crawler's); without one, that runs inline. */
  contentPool?: ContentPool;
}

/** One link index job's payload. */
export interface LinkIndexJobData {
  linkId: number;
  /** Ignore the stored head: re-read and re-parse everything. */
  force?: boolean;
  requestId?: string;
}

export type LinkIndexOutcome = 'indexed' | 'unchanged' | 'failed' | 'missing';

/** A failure recorded on the link (status failed, owners told) instead of retried. */
class LinkFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The unified refusal for App links: it must not tell a team whether the App is installed on someone's repository. */
function notAuthorized(link: LinkWithNames): LinkFailure {
  const team = formatIdentity('hub', link.namespace);
  return new LinkFailure(
    'link-not-authorized',
    `The hub's GitHub App may not index ${link.githubOwner}/${link.githubRepo} for ${team}: install the App on the repository and add a file ${link.folder ? `${link.folder}/` : ''}${LINK_MARKER_FILE} holding the line ${team}.`,
  );
}

/** Whether the marker file names this link's team (or exactly its collection). */
export function markerAllows(content: string, namespace: string, collection: string): boolean {
  const allowed = new Set([
    formatIdentity('hub', namespace),
    formatIdentity('hub', `${namespace}/${collection}`),
  ]);
  return content
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().toLowerCase())
    .some((line) => allowed.has(line));
}

/**
 * Indexes one linked repository folder into `hub:<team>/<collection>` through the same skill-folder
 * pipeline as a public crawl (leaf rule, content pool, cached verdicts, phases); the collection's
 * revision follows the commit. A credential that stops working (or a repository that went away) marks
 * the link failed, tells the owners in the audit log, and leaves the last good revision to members.
 */
export async function indexLink(
  deps: LinkIndexDeps,
  data: LinkIndexJobData,
  ctx: JobContext,
): Promise<{ outcome: LinkIndexOutcome; skills: number }> {
  // Indexes of one link may run at once (a push during an index): the one that read an older stored head
  // than the one it would replace starts over instead of writing, so a newer commit is never overwritten.
  for (let attempt = 1; ; attempt++) {
    const result = await indexOnce(deps, data, ctx);
    if (result.outcome !== 'superseded' || attempt >= 5) {
      return {
        outcome: result.outcome === 'superseded' ? 'unchanged' : result.outcome,
        skills: result.skills,
      };
    }
  }
}

/** One index's result: `superseded` when another index wrote a newer head meanwhile. */
type IndexOnceResult = { outcome: LinkIndexOutcome | 'superseded'; skills: number };

async function indexOnce(
  deps: LinkIndexDeps,
  data: LinkIndexJobData,
  ctx: JobContext,
): Promise<IndexOnceResult> {
  const { db, settings, access } = deps;
  const link = await findLinkById(db, data.linkId);
  if (!link) return { outcome: 'missing', skills: 0 };
  const before = { installationId: link.installationId };
  const identity = formatIdentity('hub', `${link.namespace}/${link.collection}`);
  const run = pipelineRun(deps.logger.child({ link: identity, linkId: link.id }), new Date());
  await setLinkStatus(db, link.id, 'indexing', new Date());

  // An App link proves its right to the repository with the marker file before anything about the
  // repository is stored or told: until then every failure is the one link-not-authorized answer, and the
  // link remembers neither the repository's id (which would make it follow renames and transfers) nor its
  // installation nor any commit. A token link needs no marker: its token reads the repository. `disclosed`:
  // the link may be told why an index failed (a token link, or an App link a marker once allowed: it holds
  // the repository's id); the marker itself is read again at every index of an App link.
  let authorized = link.credential !== 'app';
  let disclosed = authorized || link.githubRepoId !== null;
  try {
    let token = await linkToken(deps, link);
    let repo: Awaited<ReturnType<LinkAccess['readRepository']>>;
    try {
      repo = await access.readRepository(link.githubOwner, link.githubRepo, token);
    } catch (error) {
      // A cached installation token dies with its installation: mint a fresh one, which says why.
      if (!(error instanceof LinkAccessError) || link.credential !== 'app') throw error;
      token = await access.tokenFor(link, { refresh: true });
      repo = await access.readRepository(link.githubOwner, link.githubRepo, token);
    }
    const stored = await storedLinkedSkills(db, link.collectionId);
    const pipelineDeps = { db, settings, contentPool: deps.contentPool ?? new ContentPool(0) };
    return await indexSkillFolder<IndexOnceResult>(pipelineDeps, run, {
      remote: { url: githubGitUrl(settings.gitBaseUrl, repo.owner, repo.name), token, signal: ctx.signal },
      folder: link.folder,
      identityRoot: { source: 'hub', segments: [link.namespace, link.collection] },
      rootName: link.collection,
      force: data.force ?? false,
      probe: true,
      // A link queued anew (created, or its credential replaced) is read whatever its stored head.
      knownHead: !data.force && link.status !== 'queued' ? link.headCommit : null,
      defaultBranch: repo.defaultBranch,
      overCapWarnings: false,
      storedRevisions: async () => stored,
      // Nothing pushed since the last good index: confirm it (and clear a failure the credential recovered from).
      unchanged: async (head) => {
        const skills: LinkedSkill[] = [...stored].map(([path, s]) => ({
          identity: s.identity,
          path,
          revision: s.revision,
        }));
        const confirmed = await writeLinkIndex(db, {
          linkId: link.id,
          expectedHead: link.headCommit,
          commit: head.commit as string,
          skills,
          manifest: [],
          problems: link.problems,
          at: new Date(),
        });
        if (confirmed !== 'written') return { outcome: confirmed, skills: 0 };
        return { outcome: 'unchanged', skills: skills.length };
      },
      empty: async () => {
        if (!disclosed) throw notAuthorized(link);
        throw new LinkFailure('empty-repository', 'The repository has no commits yet.');
      },
      // A missing folder holds no marker: the same answer as any other refusal (no commit, no folder name).
      missingFolder: async (commit) => {
        if (!disclosed) throw notAuthorized(link);
        throw new LinkFailure(
          'folder-not-found',
          `The repository has no folder ${link.folder} at ${commit}.`,
        );
      },
      authorize: async (tree, snapshot) => {
        if (!authorized) {
          await checkMarker(link, tree.entries, snapshot, settings.crawlMaxFileBytes);
          authorized = true;
          disclosed = true;
        }
        if (repo.id !== link.githubRepoId) await setLinkRepositoryId(db, link.id, repo.id);
        if (
          link.credential === 'app' &&
          link.installationId !== null &&
          before.installationId !== link.installationId
        ) {
          await setLinkInstallation(db, link.id, link.installationId);
        }
      },
      write: async (read) => {
        const written = await writeLinkIndex(db, {
          linkId: link.id,
          expectedHead: link.headCommit,
          commit: read.commit,
          skills: read.skills.map((s) => ({
            identity: s.identity,
            path: s.storedPath,
            revision: s.revision,
            ...(s.content ? { content: s.content } : {}),
          })),
          manifest: manifestOf(read, stored),
          problems: [...run.warnings, ...run.errors],
          at: new Date(),
        });
        if (written !== 'written') return { outcome: written, skills: 0 };
        const changed = read.skills.filter((s) => s.content).length;
        run.log.info(
          { commit: read.commit, skills: read.skills.length, changed },
          'linked repository indexed',
        );
        return { outcome: 'indexed', skills: read.skills.length };
      },
    });
  } catch (error) {
    if (error instanceof RateLimitedError || abortedByShutdown(ctx.signal)) throw error;
    const known = asFailure(error, link);
    // Before the marker allowed it, an App link is told nothing but the one refusal, whatever went wrong.
    const failure = known && !disclosed ? notAuthorized(link) : known;
    if (!failure) {
      if (!ctx.finalAttempt) throw error;
      if (!disclosed) {
        await recordFailure(deps, link, notAuthorized(link), data.requestId);
        return { outcome: 'failed', skills: 0 };
      }
      await recordFailure(
        deps,
        link,
        new LinkFailure('index-failed', (error as Error).message),
        data.requestId,
      );
      return { outcome: 'failed', skills: 0 };
    }
    await recordFailure(deps, link, failure, data.requestId);
    run.log.warn({ code: failure.code }, 'linked repository could not be indexed');
    return { outcome: 'failed', skills: 0 };
  }
}

/**
 * Records a link job that the queue ended without the job recording it (its workers died or hung past the
 * stall limit, or its last attempt threw past its own catch): a link still queued or indexing is marked
 * failed, and its owners told, instead of showing `indexing` for ever. An App link its marker never allowed
 * is told the one refusal, as for every other failure before the marker (nothing about the repository).
 */
export async function recordAbandonedLinkJob(
  deps: Pick<LinkIndexDeps, 'db' | 'logger'>,
  data: LinkIndexJobData,
  reason: string,
): Promise<void> {
  const link = await findLinkById(deps.db, data.linkId);
  if (!link || (link.status !== 'queued' && link.status !== 'indexing')) return;
  const disclosed = link.credential !== 'app' || link.githubRepoId !== null;
  const failure = disclosed
    ? new LinkFailure('index-abandoned', `The index job ended without a result: ${reason}`)
    : notAuthorized(link);
  await recordLinkFailure(deps.db, link, {
    code: failure.code,
    message: failure.message,
    at: new Date(),
    requestId: data.requestId,
  });
  deps.logger.warn({ linkId: link.id, reason }, 'abandoned link job recorded as failed');
}

/**
 * The marker alone, before anything else of the repository is downloaded (one small blob wanted by its
 * sha; explicit wants ignore the size filter): throws the one refusal unless it names the link's team.
 */
async function checkMarker(
  link: LinkWithNames,
  entries: TreeEntry[],
  snapshot: RemoteSnapshot,
  maxBytes: number,
): Promise<void> {
  const marker = entries.find((e) => e.path === LINK_MARKER_FILE && e.type === 'file');
  const blobs = marker?.sha
    ? await snapshot.fetchFolderBlobs([marker.sha], maxBytes)
    : new Map<string, Buffer>();
  const content = marker?.sha ? blobs.get(marker.sha) : undefined;
  if (
    !content ||
    content.length > 64 * 1024 ||
    !markerAllows(content.toString('utf8'), link.namespace, link.collection)
  ) {
    throw notAuthorized(link);
  }
}

/**
 * The collection's file manifest at the indexed commit, sorted by path: an unchanged skill's files as
 * stored, a changed one's as read now.
 */
function manifestOf(
  read: IndexedFolder,
  stored: Map<string, { files: { path: string; size: number; sha256: string }[] }>,
): { path: string; size: number; sha256: string }[] {
  const manifest = read.skills.flatMap((s) =>
    (s.content?.files ?? stored.get(s.storedPath)?.files ?? []).map((file) => manifestEntry(s.path, file)),
  );
  return manifest.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A token for the link; App links find (and remember) their installation on the first index. */
async function linkToken(deps: LinkIndexDeps, link: LinkWithNames): Promise<string> {
  if (link.credential === 'app' && link.installationId === null) {
    // Kept in memory until the repository's marker allows the link: a refused link must not remember
    // (and later be told about) an installation on a repository that is not its team's.
    link.installationId = await deps.access.installationFor(link.githubOwner, link.githubRepo);
  }
  return deps.access.tokenFor(link);
}

/** The failure to record for an error, or undefined when it is worth another attempt. */
function asFailure(error: unknown, link: LinkWithNames): LinkFailure | undefined {
  if (error instanceof LinkFailure) return error;
  if (error instanceof LinkAccessError) {
    // App links answer one way whether the App is missing or the repository unknown: no oracle.
    if (
      link.credential === 'app' &&
      (error.code === 'app-not-installed' || error.code === 'repository-not-found')
    ) {
      return notAuthorized(link);
    }
    return new LinkFailure(error.code, error.message);
  }
  if (error instanceof GitError) {
    if (error.kind === 'not-found') {
      return new LinkFailure(
        'repository-not-found',
        `git: the credential cannot read the repository (${error.message}).`,
      );
    }
    if (error.kind === 'access-denied')
      return new LinkFailure('credential-refused', `git refused the credential: ${error.message}`);
    if (error.kind === 'timeout' || error.kind === 'aborted')
      return new LinkFailure('timeout', error.message);
  }
  return undefined;
}

/** Marks the link failed; the first time for this reason its owners are told in the audit log. */
async function recordFailure(
  deps: LinkIndexDeps,
  link: LinkWithNames,
  failure: LinkFailure,
  requestId: string | undefined,
): Promise<void> {
  await recordLinkFailure(deps.db, link, {
    code: failure.code,
    message: failure.message,
    at: new Date(),
    requestId,
  });
}

function manifestEntry(skillPath: string, file: { path: string; size: number; sha256: string }) {
  return {
    path: skillPath === '' ? file.path : `${skillPath}/${file.path}`,
    size: file.size,
    sha256: file.sha256,
  };
}
