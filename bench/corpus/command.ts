import path from 'node:path';
import { parseArgs } from 'node:util';
import { corpusReposDir } from '../../test/support/corpus.js';
import { corpusDir } from '../lib/env.js';
import { writeResult } from '../lib/report.js';
import { median, percentile } from '../lib/stats.js';
import { fitCorpus } from './fit.js';
import { generateCorpus } from './generate.js';

/** Default folder of the generated corpus: where the benchmarks read it (BENCH_CORPUS, else bench/work/corpus). */
export const defaultCorpusDir = corpusDir;

/** `npm run bench -- corpus --skills 56804 --repos 1133 [--seed 1] [--out DIR]` */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      skills: { type: 'string', default: '56804' },
      repos: { type: 'string', default: '1133' },
      largest: { type: 'string', default: '6300' },
      seed: { type: 'string', default: '1' },
      'description-median': { type: 'string', default: '150' },
      'body-median': { type: 'string', default: '900' },
      out: { type: 'string', default: defaultCorpusDir },
      'shared-corpus': {
        type: 'string',
        // ATSKILLS_CORPUS_DIR when the worktree does not sit beside ../shared.
        default: corpusReposDir,
      },
    },
  });
  const started = performance.now();
  const fit = fitCorpus(values['shared-corpus']!);
  const skills = Number(values.skills);
  const repos = Number(values.repos);
  const corpus = await generateCorpus(fit, {
    skills,
    repos,
    largest: Math.min(Number(values.largest), skills),
    seed: Number(values.seed),
    descriptionMedian: Number(values['description-median']),
    bodyMedianWords: Number(values['body-median']),
    outDir: path.resolve(values.out!),
  });
  const seconds = (performance.now() - started) / 1000;
  const perRepo = corpus.repos.map((r) => r.skills.length);
  const folderBytes = corpus.repos.reduce((s, r) => s + r.skillFolderBytes, 0);
  writeResult(
    'corpus',
    [
      { measure: 'repositories', value: corpus.repos.length },
      { measure: 'skills (leaf rule)', value: perRepo.reduce((s, x) => s + x, 0) },
      { measure: 'largest repository (skills)', value: Math.max(...perRepo) },
      { measure: 'median skills per repository', value: median(perRepo) },
      { measure: 'p90 skills per repository', value: percentile(perRepo, 90) },
      { measure: 'skill-folder bytes (MiB)', value: Math.round(folderBytes / 2 ** 20) },
      { measure: 'fitted from shared corpus skills', value: fit.skills },
      { measure: 'no-frontmatter share', value: Math.round(fit.noFrontmatterShare * 1000) / 1000 },
      { measure: 'invalid-yaml share', value: Math.round(fit.invalidYamlShare * 1000) / 1000 },
      { measure: 'generation time (s)', value: Math.round(seconds * 10) / 10 },
    ],
    { seed: corpus.seed, out: path.relative(process.cwd(), values.out!) },
  );
}
