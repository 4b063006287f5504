/**
 * Seeds the index for API tests: corpus repositories (read from the shared corpus as data, parsed with the
 * core, written through the crawler's own writeRepositoryIndex so rows look exactly like crawled ones),
 * synthetic repositories, and hub collections. Stand-in for the crawler while it was being written; it
 * stays because it is fast (no git, no queue) and the crawler has its own tests.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  blobs,
  collections,
  createCrawlRun,
  type Database,
  ensureRepository,
  finishCrawlRun,
  namespaces,
  type SeenSkill,
  type SkillFile,
  skillRevisions,
  skills,
  writeRepositoryIndex,
} from '@atskills/db';
import {
  findSkillFolders,
  formatIdentity,
  type SafetyFinding,
  scanSkillFiles,
  skillFiles,
  type TreeEntry,
  tryParseSkillMarkdown,
} from '@atskills/protocol';
import { countTokens } from '@atskills/protocol/tokens';
import { eq } from 'drizzle-orm';
import { corpusReposDir, readCorpusTree } from '../../../../test/support/corpus.js';

/** A file of a synthetic repository: its bytes, or only a size (not downloaded, like a crawled binary). */
export type SeedFile = string | Buffer | { size: number };

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

interface SkillInput {
  path: string;
  skillMd: Buffer | null;
  files: { path: string; content: Buffer | null; size: number }[];
}

function contentOf(skill: SkillInput, extraFlags: SafetyFinding[] = []) {
  const folderName = skill.path.split('/').pop() ?? '';
  const files: SkillFile[] = [];
  const blobRows: { sha256: string; size: number; content: Buffer }[] = [];
  for (const f of skill.files) {
    if (f.content) {
      const hash = sha256(f.content);
      files.push({ path: f.path, size: f.content.length, sha256: hash });
      blobRows.push({ sha256: hash, size: f.content.length, content: f.content });
    } else {
      files.push({
        path: f.path,
        size: f.size,
        sha256: sha256(`absent:${f.path}`),
        skipped: 'not-downloaded',
      });
    }
  }
  const revision = sha256(files.map((f) => `${f.path}\t${f.sha256}`).join('\n'));
  const base = { files, blobs: blobRows, flags: extraFlags };
  // A skill whose SKILL.md cannot be indexed: stored with its parse error, kept out of search.
  const unindexable = (parseError: { code: string; message: string }) => ({
    revision,
    content: {
      ...base,
      name: '',
      description: '',
      frontmatter: {},
      body: '',
      warnings: [],
      parseError,
      descriptionTokens: 0,
      bodyTokens: 0,
    },
  });
  if (!skill.skillMd) {
    return unindexable({ code: 'content-unavailable', message: 'SKILL.md content is withheld' });
  }
  const parsed = tryParseSkillMarkdown(skill.skillMd, folderName);
  if (!parsed.ok) {
    return unindexable({ code: parsed.error.code, message: parsed.error.message });
  }
  const doc = parsed.doc;
  const texts = skill.files
    .filter((f) => f.content && /\.(md|txt|sh|py)$/i.test(f.path))
    .map((f) => ({ path: f.path, content: f.content!.toString('utf8') }));
  const flags = [
    ...(scanSkillFiles(texts, { description: doc.description }) as SafetyFinding[]),
    ...extraFlags,
  ];
  return {
    revision,
    content: {
      ...base,
      flags,
      name: doc.name,
      description: doc.description,
      frontmatter: doc.frontmatter,
      body: doc.body,
      warnings: doc.warnings,
      parseError: null,
      descriptionTokens: countTokens(doc.description),
      bodyTokens: countTokens(doc.body),
    },
  };
}

/** Splits a listing of files into skills by the leaf rule. */
function skillsOf(entries: TreeEntry[], read: (p: string) => Buffer | null): SkillInput[] {
  return findSkillFolders(entries).map((folder) => {
    const files = skillFiles(entries, folder).map((e) => {
      const rel = folder === '' ? e.path : e.path.slice(folder.length + 1);
      return { path: rel, content: read(e.path), size: e.size ?? 0 };
    });
    const md = files.find((f) => f.path === 'SKILL.md');
    return { path: folder, skillMd: md?.content ?? null, files };
  });
}

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
    const { revision, content } = contentOf(s, opts.flags?.[s.path]);
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

/** Publishes a hub collection directly into the tables (what the publish service does), one revision. */
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
  const identities: string[] = [];
  for (const s of inputs) {
    const { revision, content } = contentOf(s);
    const identity = formatIdentity('hub', [namespace, collection, ...(s.path ? [s.path] : [])].join('/'));
    for (const b of content.blobs) await db.insert(blobs).values(b).onConflictDoNothing();
    const values = {
      identity,
      source: 'hub',
      collectionId: coll!.id,
      owner: namespace,
      container: collection,
      path: s.path,
      name: content.name,
      description: content.description,
      frontmatter: content.frontmatter,
      body: content.body,
      warnings: content.warnings,
      parseError: content.parseError,
      files: content.files,
      flags: content.flags,
      revision,
      commit: null,
      descriptionTokens: content.descriptionTokens,
      bodyTokens: content.bodyTokens,
      stars: opts.popularity ?? 0,
      visibility,
      goneAt: null,
    };
    const [row] = await db
      .insert(skills)
      .values(values)
      .onConflictDoUpdate({ target: skills.identity, set: values })
      .returning({ id: skills.id });
    await db
      .insert(skillRevisions)
      .values({
        skillId: row!.id,
        revision,
        name: content.name,
        description: content.description,
        frontmatter: content.frontmatter,
        body: content.body,
        files: content.files,
      })
      .onConflictDoNothing();
    identities.push(identity);
  }
  return identities;
}

/** A SKILL.md with the given frontmatter and body. */
export function skillMd(
  name: string,
  description: string,
  body = `# ${name}\n\nDo the ${name} thing.\n`,
): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n${body}`;
}
