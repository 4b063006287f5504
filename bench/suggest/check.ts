/**
 * `npx tsx bench/suggest/check.ts [file]`: validates the suggestion message set
 * against the shared corpus (ATSKILLS_CORPUS_DIR when the worktree is not beside ../shared) and prints its
 * figures; exits 1 when the set is invalid or has fewer messages of a kind than MINIMUM_PER_KIND.
 */
import { spawnSync } from 'node:child_process';

// `@atskills/*` resolve to their TypeScript sources only under this condition (as in bench/run.ts): plain
// `npx tsx` would load dist/, which may not be built. Re-run under it.
const sourceCondition = '--conditions=@atskills/source';
if (!process.execArgv.includes(sourceCondition) && !process.env.NODE_OPTIONS?.includes(sourceCondition)) {
  const again = spawnSync(
    process.execPath,
    ['--import', 'tsx', sourceCondition, import.meta.filename, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(again.status ?? 1);
}

const { checkMessages } = await import('./messages.js');
const report = await checkMessages(process.argv[2]);
console.log(`messages: ${report.total}`);
for (const [kind, n] of Object.entries(report.counts)) console.log(`  ${kind.padEnd(9)} ${n}`);
console.log(
  `over 300 characters: ${report.over300Chars} (${Math.round((100 * report.over300Chars) / Math.max(1, report.total))}%)`,
);
console.log(`with a code block: ${report.withCodeBlock}`);
console.log(`distinct skills judged relevant: ${report.identitiesJudged}`);
console.log('relevant entries per repository:');
for (const [repo, n] of Object.entries(report.repositories).sort((a, b) => b[1] - a[1]))
  console.log(`  ${repo.padEnd(46)} ${n}`);
for (const w of report.warnings) console.log(`warning: ${w}`);
for (const s of report.shortfalls) console.log(`error: ${s}`);
for (const e of report.errors) console.log(`error: ${e}`);
const failed = report.errors.length + report.shortfalls.length;
console.log(failed === 0 ? 'ok' : `${failed} error(s)`);
process.exit(failed === 0 ? 0 : 1);
