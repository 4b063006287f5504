/**
 * `npm run bench -- load [--skills 56804] [--repos 1133] [--seed 1]`: generates the benchmark corpus (the
 * same skills `bench -- corpus` writes as git repositories, same seed) and writes it straight into the
 * benchmark database's index tables through the crawler's own writeRepositoryIndex, without git or a
 * crawl: what search, probe and memory benchmarks need at full scale, in minutes instead of a crawl's
 * half hour. The crawl itself is measured by `bench -- crawl`. Rows are inserted in batches with what
 * search and resolution read (name, description, body, revision, stars, file list); token counts are
 * estimated at four characters a token instead of running the tokenizer over 50 MB of bodies, and no
 * blobs are stored (archives of these skills are not served).
 */

import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectPostgres, ensureRepository, skills as skillsTable } from '@atskills/db';
import { findSkillFolders, formatIdentity, tryParseSkillMarkdown } from '@atskills/protocol';
import pg from 'pg';
import { corpusReposDir } from '../../test/support/corpus.js';
import { ensureBenchDatabase, indexedSkills } from '../lib/env.js';
import { writeResult } from '../lib/report.js';
import { fitCorpus } from './fit.js';
import { generateCorpus } from './generate.js';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      skills: { type: 'string', default: '56804' },
      repos: { type: 'string', default: '1133' },
      largest: { type: 'string', default: '6300' },
      seed: { type: 'string', default: '1' },
      'shared-corpus': {
        type: 'string',
        // ATSKILLS_CORPUS_DIR when the worktree does not sit beside ../shared.
        default: corpusReposDir,
      },
    },
  });
  const url = await ensureBenchDatabase(true);
  const handle = connectPostgres({ url, max: 2 });
  const started = performance.now();
  try {
    const fit = fitCorpus(values['shared-corpus']!);
    const skills = Number(values.skills);
    await generateCorpus(fit, {
      skills,
      repos: Number(values.repos),
      largest: Math.min(Number(values.largest), skills),
      seed: Number(values.seed),
      descriptionMedian: 150,
      bodyMedianWords: 900,
      outDir: path.resolve(import.meta.dirname, '..', 'work', 'load-scratch'),
      onRepo: async (repo, files) => {
        const row = await ensureRepository(handle.db, repo.owner, repo.repo);
        const entries = [...files.keys()].map((p) => ({ path: p, type: 'file' as const }));
        const values = findSkillFolders(entries).map((folder) => {
          const prefix = folder === '' ? '' : `${folder}/`;
          const own = [...files.entries()].filter(([p]) => p.startsWith(prefix));
          const manifest = own.map(([p, content]) => ({
            path: p.slice(prefix.length),
            size: Buffer.byteLength(content),
            sha256: createHash('sha256').update(content).digest('hex'),
          }));
          const revision = createHash('sha256')
            .update(manifest.map((f) => `${f.path}\t${f.sha256}`).join('\n'))
            .digest('hex');
          const md = Buffer.from(files.get(`${prefix}SKILL.md`) ?? '');
          const parsed = tryParseSkillMarkdown(md, folder.split('/').pop() ?? '');
          const doc = parsed.ok ? parsed.doc : null;
          return {
            identity: formatIdentity('gh', [repo.owner, repo.repo, ...(folder ? [folder] : [])].join('/')),
            source: 'gh',
            repositoryId: row.id,
            owner: repo.owner,
            container: repo.repo,
            path: folder,
            name: doc?.name ?? '',
            description: doc?.description ?? '',
            frontmatter: doc?.frontmatter ?? {},
            body: doc?.body ?? '',
            warnings: doc?.warnings ?? [],
            parseError: parsed.ok ? null : { code: parsed.error.code, message: parsed.error.message },
            files: manifest,
            revision,
            commit: revision.slice(0, 40),
            descriptionTokens: Math.ceil((doc?.description.length ?? 0) / 4),
            bodyTokens: Math.ceil((doc?.body.length ?? 0) / 4),
            stars: repo.stars,
          };
        });
        for (let i = 0; i < values.length; i += 500) {
          await handle.db
            .insert(skillsTable)
            .values(values.slice(i, i + 500))
            .onConflictDoNothing();
        }
      },
    });
  } finally {
    await handle.close();
  }
  // What autovacuum would do after a bulk load (this machine's Postgres runs without it).
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('vacuum (analyze) skills, skill_folders, repositories');
  await client.end();
  const seconds = (performance.now() - started) / 1000;
  writeResult('load', [
    { measure: 'live skills indexed', value: await indexedSkills(url) },
    { measure: 'load time (s)', value: Math.round(seconds) },
  ]);
}
