/**
 * `npm run bench -- <name> [options]`: runs one benchmark, writes bench/results/<name>.json and prints a
 * table. Each benchmark lives in its own module exporting `run(args)`.
 */
import { parseArgs } from 'node:util';

const benchmarks: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  corpus: () => import('./corpus/command.js'),
  crawl: () => import('./crawl/command.js'),
  search: () => import('./search/command.js'),
  probe: () => import('./probe/command.js'),
  'resolve-batch': () => import('./resolve-batch/command.js'),
};

const [name, ...rest] = process.argv.slice(2);
if (!name || !(name in benchmarks)) {
  console.error(`usage: npm run bench -- <${Object.keys(benchmarks).join('|')}> [options]`);
  process.exit(2);
}
parseArgs({ args: [], options: {} });
const mod = await benchmarks[name]!();
await mod.run(rest);
