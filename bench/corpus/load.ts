/**
 * `npm run bench -- load [--skills 56804] [--repos 1133] [--seed 1]`: generates the benchmark corpus (the
 * same skills `bench -- corpus` writes as git repositories, same seed) and writes it straight into the
 * benchmark database's index tables through the crawler's own writeRepositoryIndex, without git or a
 * crawl: what search, probe and memory benchmarks need at full scale, in minutes instead of a crawl's
 * half hour. The crawl itself is measured by `bench -- crawl`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import pg from 'pg';
import { seedRepository } from '../../apps/api/test/support/seed.js';
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
        default: path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'repos'),
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
        await seedRepository(handle.db, repo.owner, repo.repo, Object.fromEntries(files), {
          stars: repo.stars,
        });
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
