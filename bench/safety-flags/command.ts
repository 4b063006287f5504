/**
 * `npm run bench -- safety-flags`: the safety scanner over the shared corpus, per rule (flags, flagged
 * skills, share against the rule's ceiling), written to bench/results/safety-flags.json. The corpus test
 * (packages/protocol/src/safety/corpus.test.ts) asserts the same ceilings without writing anything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { corpusSafetyFigures } from '../../packages/protocol/src/safety/corpus.test-support.js';
import { resultsDir } from '../lib/report.js';

export async function run(_args: string[]): Promise<void> {
  const report = corpusSafetyFigures();
  const file = path.join(resultsDir, 'safety-flags.json');
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`safety flags on ${report.skills} corpus skills (${report.markdownFiles} Markdown files)`);
  console.table(report.rules);
  console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
}
