import type { Database, ReportEntry, SkillRevisionContent } from '@atskills/db';
import type { CrawlerSettings } from '../config.js';
import type { ContentPool } from '../content/content-pool.js';
import { type RemoteHead, RemoteSnapshot } from '../git/remote-snapshot.js';
import { buildContent } from './content.js';
import { type IdentityRoot, leafRule, overCapProblems, type SkillFolder } from './leaf-rule.js';
import { type GitRemote, inRepository, type PipelineRun } from './pipeline-run.js';
import { probe } from './probe.js';
import { type FolderTree, fetchTrees, treeWarnings } from './trees.js';
import { judgeContent } from './verdicts.js';

/** What the pipeline needs of a job's dependencies (the crawl job's and the link job's both fit). */
export interface PipelineDeps {
  db: Database;
  settings: Pick<CrawlerSettings, 'crawlMaxFileBytes' | 'crawlWorkDir'>;
  /** The processes that parse, count tokens and scan. */
  contentPool: ContentPool;
}

/** A skill seen at the head: an unchanged one by reference, a changed one with what the index stores of it. */
export interface IndexedSkill extends SkillFolder {
  content?: SkillRevisionContent;
}

/** What the pipeline read at the head, for the job's write. */
export interface IndexedFolder {
  commit: string;
  branch: string | null;
  /** Every skill of the folder: the unchanged ones first, then the changed ones, each in leaf-rule order. */
  skills: IndexedSkill[];
  /** Bytes of every pack downloaded (trees and blobs). */
  bytesDownloaded: number;
}

/**
 * What a job tells the pipeline: where the skills are and how they are named, and what each way the
 * pipeline can end means to the job (its own result `T`: a crawl report, a link index). The repository
 * crawl and the link index differ only here.
 */
export interface SkillFolderSource<T> {
  /** The repository's git URL (from the protocol's githubGitUrl) with the job's credential and signal. */
  remote: GitRemote;
  /** The folder of the repository the skills live in ('' for the whole repository). */
  folder: string;
  /** The identity the skills hang under. */
  identityRoot: IdentityRoot;
  /** Names a root skill (the repository, or the linked collection). */
  rootName: string;
  /** Re-read and re-parse every skill, whatever revision is stored. */
  force: boolean;
  /** Probe the head before cloning (false when the clone must run anyway: it reads the head itself). */
  probe: boolean;
  /** The commit the stored index was read at, when finding it again at the probe settles the job; else null. */
  knownHead: string | null;
  /** The branch to fetch when the probe named none (null: the remote's HEAD). */
  defaultBranch: string | null;
  /** Report folders holding more skills than a menu lists (the public index's reports do). */
  overCapWarnings: boolean;
  /** The revisions of the last index by stored path (read only once the trees are fetched). */
  storedRevisions(): Promise<ReadonlyMap<string, { revision: string }>>;
  /** The probe found `knownHead` again: nothing was pushed since. */
  unchanged(head: RemoteHead): Promise<T>;
  /** The repository has no commits. */
  empty(head: RemoteHead): Promise<T>;
  /** `folder` is not in the fetched head (never for the whole repository). */
  missingFolder?(commit: string): Promise<T>;
  /** Refuses (throws) before any blob is fetched when the job may not read the folder (a link's marker). */
  authorize?(tree: FolderTree, snapshot: RemoteSnapshot): Promise<void>;
  /** The write phase: stores what was read. */
  write(folder: IndexedFolder): Promise<T>;
}

/**
 * Indexes the skill folders of one repository folder, in phases: probe -> snapshot -> trees -> leaf rule
 * -> blobs -> content -> verdicts -> write. Trees come without blobs; only the changed skill folders' blobs
 * under the size limit are downloaded; parsing and scanning run on the content pool; verdicts are cached
 * by content hash. Problems go into `run` with repository paths. Errors propagate: the job decides whether
 * a failure is retried or recorded.
 */
export async function indexSkillFolder<T>(
  deps: PipelineDeps,
  run: PipelineRun,
  source: SkillFolderSource<T>,
): Promise<T> {
  const head = source.probe ? await probe(source.remote) : null;
  run.phaseDone('probe');
  if (head !== null && head.commit !== null && head.commit === source.knownHead) {
    return source.unchanged(head);
  }
  if (head !== null && head.commit === null) return source.empty(head);

  const { url, token, signal } = source.remote;
  const snapshot = await RemoteSnapshot.open(url, { token, signal, workDir: deps.settings.crawlWorkDir });
  try {
    const tree = await fetchTrees(snapshot, head?.branch ?? source.defaultBranch, source.folder);
    if (tree.commit === null) return await source.empty({ commit: null, branch: null });
    if ('missingFolder' in tree) {
      if (!source.missingFolder) throw new Error(`no folder ${source.folder} at ${tree.commit}`);
      return await source.missingFolder(tree.commit);
    }
    run.phaseDone('trees');
    report(run.warnings, source.folder, treeWarnings(tree.entries));
    await source.authorize?.(tree, snapshot);

    const leafErrors: ReportEntry[] = [];
    const stored = await source.storedRevisions();
    const folders = leafRule(
      tree.entries,
      tree.folderTree,
      source.identityRoot,
      stored,
      source.force,
      leafErrors,
    );
    report(run.errors, source.folder, leafErrors);
    if (source.overCapWarnings) {
      report(run.warnings, source.folder, overCapProblems(folders.all.map((f) => f.path)));
    }
    run.phaseDone('leaf rule');

    const maxBytes = deps.settings.crawlMaxFileBytes;
    const blobs = await snapshot.fetchFolderBlobs(
      folders.changed.map((f) => f.revision),
      maxBytes,
    );
    run.phaseDone('blobs');

    const contentErrors: ReportEntry[] = [];
    const contents = await buildContent(
      deps.contentPool,
      tree.entries,
      folders.changed,
      blobs,
      { maxBytes, rootName: source.rootName },
      contentErrors,
    );
    report(run.errors, source.folder, contentErrors);
    run.phaseDone('content');

    const judged = await judgeContent(deps.db, deps.contentPool, contents);
    run.phaseDone('verdicts');

    const changed = new Set(folders.changed);
    const skills: IndexedSkill[] = [
      ...folders.all.filter((f) => !changed.has(f)),
      ...folders.changed.map((f, i) => ({ ...f, content: judged[i]! })),
    ];
    const bytesDownloaded = await snapshot.bytesDownloaded();
    const result = await source.write({ commit: tree.commit, branch: tree.branch, skills, bytesDownloaded });
    run.phaseDone('write');
    return result;
  } finally {
    await snapshot.dispose();
  }
}

/** Appends problems found under the folder to `into`, named by their repository paths. */
function report(into: ReportEntry[], folder: string, entries: ReportEntry[]): void {
  for (const entry of entries) into.push({ ...entry, path: inRepository(folder, entry.path) });
}
