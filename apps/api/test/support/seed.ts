/**
 * Seeds the index for API tests: corpus repositories (read from the shared corpus as data, built with the
 * same skillContent as a crawl and written through the crawler's writeRepositoryIndex, so rows look exactly
 * like crawled ones), synthetic repositories, and hub collections. Stand-in for the crawler while it was being written; it
 * stays because it is fast (no git, no queue) and the crawler has its own tests.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  collections,
  createCrawlRun,
  type Database,
  ensureRepository,
  finishCrawlRun,
  namespaces,
  type SeenSkill,
  storeBlobs,
  upsertHubSkills,
  writeRepositoryIndex,
} from '@atskills/db';
import {
  findSkillFolders,
  formatIdentity,
  type SafetyFinding,
  skillFilesOf,
  type TreeEntry,
} from '@atskills/protocol';
import { skillContent } from '@atskills/protocol/content';
import { eq } from 'drizzle-orm';
import { corpusReposDir, readCorpusTree } from '../../../../test/support/corpus.js';

/** A file of a synthetic repository: its bytes, or only a size (not downloaded, like a crawled binary). */
export type SeedFile = string | Buffer | { size: number };

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

interface SkillInput {
  /** The skill folder relative to the repository or collection root. */
  path: string;
  /** Files with root-relative paths; null content: not downloaded (only its size is known). */
  files: { path: string; content: Buffer | null; size: number }[];
}

/** The skill's content exactly as a crawl or a publish builds it (`@atskills/protocol/content`). */
function contentOf(skill: SkillInput, rootName: string, extraFlags: SafetyFinding[] = []) {
  const built = skillContent({
    folder: skill.path,
    rootName,
    files: skill.files.map((f) =>
      f.content
        ? { path: f.path, content: f.content }
        : { path: f.path, content: null, size: f.size, skipped: 'not-downloaded' },
    ),
  });
  const { contentHash: _hash, problems: _problems, flags, ...content } = built;
  // No git tree to take a revision from: the seed's revision is a hash of the file list.
  const revision = sha256(content.files.map((f) => `${f.path}\t${f.sha256}`).join('\n'));
  return { revision, content: { ...content, flags: [...(flags ?? []), ...extraFlags] } };
}

/** Splits a listing of files into skills by the leaf rule. */
function skillsOf(entries: TreeEntry[], read: (p: string) => Buffer | null): SkillInput[] {
  const folders = findSkillFolders(entries);
  const filesOf = skillFilesOf(entries, folders);
  return folders.map((folder) => ({
    path: folder,
    files: filesOf.get(folder)!.map((e) => ({
      path: e.path,
      content: read(e.path),
      size: e.size ?? 0,
    })),
  }));
}

/** A finding the scanner raises on a body that pipes a download into a shell, for seeding a flagged skill. */
export const REMOTE_EXEC_FINDING: SafetyFinding = {
  rule: 'remote-exec',
  severity: 'high',
  file: 'SKILL.md',
  line: 3,
  evidence: 'curl | sh',
  message: 'pipes a download into a shell',
};

/** Options of a seeded GitHub repository. */
export interface SeedRepoOptions {
  stars?: number;
  /** Extra safety flags per skill path (the scanner's own findings are added anyway). */
  flags?: Record<string, SafetyFinding[]>;
  commit?: string;
}

/** Writes one crawl of `owner/repo` holding `files` (path -> content) and returns the identities it indexed. */
export async function seedRepository(
  db: Database,
  owner: string,
  repo: string,
  files: Record<string, SeedFile>,
  opts: SeedRepoOptions = {},
): Promise<string[]> {
  const entries: TreeEntry[] = Object.entries(files).map(([p, f]) => ({
    path: p,
    type: 'file',
    size: typeof f === 'string' ? Buffer.byteLength(f) : Buffer.isBuffer(f) ? f.length : f.size,
  }));
  const read = (p: string) => {
    const f = files[p];
    if (typeof f === 'string') return Buffer.from(f);
    return Buffer.isBuffer(f) ? f : null;
  };
  return writeSkills(db, owner, repo, skillsOf(entries, read), opts);
}

async function writeSkills(
  db: Database,
  owner: string,
  repo: string,
  inputs: SkillInput[],
  opts: SeedRepoOptions,
) {
  const row = await ensureRepository(db, owner, repo);
  const runId = await createCrawlRun(db, { kind: 'repos', repositoriesTotal: 1 });
  const commit =
    opts.commit ?? sha256(`${owner}/${repo}:${inputs.map((s) => s.path).join(',')}`).slice(0, 40);
  const seen: SeenSkill[] = inputs.map((s) => {
    const { revision, content } = contentOf(s, repo, opts.flags?.[s.path]);
    return {
      identity: formatIdentity('gh', [owner, repo, ...(s.path ? [s.path] : [])].join('/')),
      path: s.path,
      revision,
      commit,
      content,
    };
  });
  await writeRepositoryIndex(db, {
    repositoryId: row.id,
    runId,
    outcome: 'indexed',
    head: { commit, branch: 'main' },
    metadata: {
      etag: null,
      defaultBranch: 'main',
      description: `${owner}/${repo} (test seed)`,
      stars: opts.stars ?? 0,
      license: null,
      archived: false,
      pushedAt: null,
      topics: [],
    },
    skills: seen,
    warnings: [],
    errors: [],
    bytesDownloaded: 0,
    startedAt: new Date(),
  });
  await finishCrawlRun(db, runId, 'finished');
  return seen.map((s) => s.identity);
}

/** Seeds shared-corpus repositories (`owner/repo`) as crawled; returns every identity indexed. */
export async function seedCorpus(
  db: Database,
  names: string[],
  stars: Record<string, number> = {},
): Promise<string[]> {
  const out: string[] = [];
  for (const name of names) {
    const [owner, repo] = name.split('/') as [string, string];
    const tree = await readCorpusTree(name);
    const entries: TreeEntry[] = tree.map((t) => ({
      path: t.path,
      type: t.mode === '120000' ? 'symlink' : 'file',
      size: t.size ?? 0,
    }));
    const filesDir = path.join(corpusReposDir, name, 'files');
    const contents = new Map<string, Buffer>();
    for (const t of tree) {
      const p = path.join(filesDir, t.path);
      if (t.mode !== '120000' && existsSync(p)) contents.set(t.path, await readFile(p));
    }
    const inputs = skillsOf(entries, (p) => contents.get(p) ?? null);
    out.push(...(await writeSkills(db, owner, repo, inputs, { stars: stars[name] ?? 0 })));
  }
  return out;
}

/** Publishes a hub collection directly into the tables (with the publish service's own writes), one revision. */
export async function seedHubCollection(
  db: Database,
  namespace: string,
  collection: string,
  files: Record<string, string>,
  opts: { visibility?: 'public' | 'private'; popularity?: number } = {},
): Promise<string[]> {
  const visibility = opts.visibility ?? 'public';
  await db.insert(namespaces).values({ name: namespace, kind: 'team' }).onConflictDoNothing();
  const [ns] = await db.select().from(namespaces).where(eq(namespaces.name, namespace));
  const [coll] = await db
    .insert(collections)
    .values({ namespaceId: ns!.id, name: collection, visibility, popularity: opts.popularity ?? 0 })
    .onConflictDoUpdate({ target: [collections.namespaceId, collections.name], set: { visibility } })
    .returning();
  const entries: TreeEntry[] = Object.keys(files).map((p) => ({ path: p, type: 'file' }));
  const inputs = skillsOf(entries, (p) => Buffer.from(files[p]!));
  const written = inputs.map((s) => ({
    ...contentOf(s, collection),
    identity: formatIdentity('hub', [namespace, collection, ...(s.path ? [s.path] : [])].join('/')),
    path: s.path,
  }));
  // The rows are written by the same function as a publish's.
  await storeBlobs(
    db,
    written.flatMap((w) => w.content.blobs),
  );
  await upsertHubSkills(
    db,
    {
      collectionId: coll!.id,
      namespace,
      collection,
      visibility,
      popularity: opts.popularity ?? 0,
      commit: null,
      at: new Date(),
    },
    written,
  );
  const identities = written.map((w) => w.identity);
  return identities;
}

/** A private hub collection (seedHubCollection): readable by the members of `namespace` only. */
export function seedPrivateCollection(
  db: Database,
  namespace: string,
  collection: string,
  files: Record<string, string>,
): Promise<string[]> {
  return seedHubCollection(db, namespace, collection, files, { visibility: 'private' });
}

/** A SKILL.md with the given frontmatter and body. */
export function skillMd(
  name: string,
  description: string,
  body = `# ${name}\n\nDo the ${name} thing.\n`,
): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n${body}`;
}
