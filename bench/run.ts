/**
 * `npm run bench -- <name> [options]`: runs one benchmark, writes bench/results/<name>.json and prints a
 * table. Each benchmark lives in its own module exporting `run(args)`.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

// Benchmarks measure the sources, like the tests: without the custom condition, `@atskills/*` imports would
// load whatever dist/ was last built. `npm run bench` starts plain tsx, so re-run under the condition.
const sourceCondition = '--conditions=@atskills/source';
if (!process.execArgv.includes(sourceCondition) && !process.env.NODE_OPTIONS?.includes(sourceCondition)) {
  const again = spawnSync(
    process.execPath,
    // --expose-gc: benchmarks collect between phases (a built index left for a later GC would pause the
    // load generator in the middle of a measured run) and measure heaps after a collection.
    ['--expose-gc', '--import', 'tsx', sourceCondition, import.meta.filename, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(again.status ?? 1);
}

const benchmarks: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  corpus: () => import('./corpus/command.js'),
  load: () => import('./corpus/load.js'),
  crawl: () => import('./crawl/command.js'),
  search: () => import('./search/command.js'),
  probe: () => import('./probe/command.js'),
  'resolve-batch': () => import('./resolve-batch/command.js'),
  'cold-resolve': () => import('./cold-resolve/command.js'),
  memory: () => import('./memory/command.js'),
  builds: () => import('./builds/command.js'),
  client: () => import('./client/command.js'),
  relevance: () => import('./relevance/command.js'),
  'safety-flags': () => import('./safety-flags/command.js'),
  'hostile-input': () => import('./hostile-input/command.js'),
  suggest: () => import('./suggest/command.js'),
  'suggest-profile': () => import('./suggest/profile.js'),
  'suggest-against': () => import('./suggest/against.js'),
  'suggest-vectors': () => import('./suggest/vectors.js'),
  'suggest-overload': () => import('./suggest/overload.js'),
  'suggest-small': () => import('./suggest/small-hubs.js'),
  'suggest-stability': () => import('./suggest/stability.js'),
  'suggest-ask': () => import('./suggest/ask.js'),
};

const [name, ...rest] = process.argv.slice(2);
if (!name || !(name in benchmarks)) {
  console.error(`usage: npm run bench -- <${Object.keys(benchmarks).join('|')}> [options]`);
  process.exit(2);
}
parseArgs({ args: [], options: {} });
const mod = await benchmarks[name]!();
await mod.run(rest);
