/**
 * `npm run bench -- suggest-against --against <checkout> [--database <name>] [--rounds 4]`: the CPU a
 * suggestion takes in this checkout as a ratio of another's (say main before a change, in a `git worktree`
 * with its own `npm ci`), both in this one process. Each checkout's search engine and suggestion engine are
 * built from its own sources over the same database (the benchmark's, BENCH_DATABASE, by default), then every
 * judged message is answered by one and then the other, the order swapped each round. The machines these
 * benchmarks run on are shared: their speed drifted by up to a factor of two between runs minutes apart,
 * which separate `suggest-profile` runs cannot tell from a change; measured message by message in turn, both
 * sides see the same machine. Prints and writes each round's mean CPU per suggestion and the ratio
 * (`bench/results/suggest-against.json`). Both pairs of structures are held at once (about 3.5 GiB at 54,061
 * skills), which makes each side somewhat slower than alone: read the ratio, not the milliseconds.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { benchDatabaseName, ensureDatabase, repoRoot } from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { cpuMs, round } from '../lib/stats.js';
import { defaultMessagesPath, loadMessages, SUGGEST_LIMIT } from './messages.js';

type Suggest = (message: string) => Promise<unknown>;

/** Builds a checkout's search and suggestion engines from its own sources, over `db`. */
async function engineOf(checkout: string, db: ReturnType<typeof connectPostgres>['db']): Promise<Suggest> {
  const source = (file: string) => path.join(checkout, 'apps', 'api', 'src', file);
  if (!existsSync(source('suggest/engine.ts'))) {
    throw new Error(
      `--against ${checkout}: no apps/api/src/suggest/engine.ts there (a checkout of this repository?)`,
    );
  }
  const { createMemoryEngine } = await import(source('search/memory-engine.ts'));
  const { createPostgresEngine } = await import(source('search/postgres.ts'));
  const { createSuggestEngine } = await import(source('suggest/engine.ts'));
  const memory = createMemoryEngine(db, createPostgresEngine(db), { maxBytes: 2 ** 32 });
  await memory.build();
  const suggest = createSuggestEngine(db, memory, { maxBytes: 2 ** 32 });
  await suggest.build();
  return (message) => suggest.suggest(message, ANONYMOUS_VIEWER, SUGGEST_LIMIT);
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      against: { type: 'string' },
      database: { type: 'string' },
      rounds: { type: 'string', default: '4' },
    },
  });
  if (!values.against)
    throw new Error('suggest-against needs --against <checkout>: the code to compare with');
  const against = path.resolve(values.against);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds ${values.rounds}: a whole number >= 1`);
  const messages = loadMessages(defaultMessagesPath()).map((j) => j.message);
  const url = await ensureDatabase(values.database ?? benchDatabaseName, false);
  const handle = connectPostgres({ url, max: 4 });
  try {
    const sides: Record<'this' | 'against', Suggest> = {
      against: await engineOf(against, handle.db),
      this: await engineOf(repoRoot, handle.db),
    };
    // A warm-up round each (JIT, lazily built structures), then the measured ones.
    for (const message of messages) {
      await sides.against(message);
      await sides.this(message);
    }
    const rows: BenchRow[] = [];
    for (let r = 0; r < rounds; r++) {
      const order: ('this' | 'against')[] = r % 2 === 0 ? ['against', 'this'] : ['this', 'against'];
      const spent = { this: 0, against: 0 };
      for (const message of messages) {
        for (const side of order) {
          const t = cpuMs();
          await sides[side](message);
          spent[side] += cpuMs() - t;
        }
      }
      rows.push({
        round: r + 1,
        first: order[0]!,
        'against ms': round(spent.against / messages.length, 3),
        'this ms': round(spent.this / messages.length, 3),
        ratio: round(spent.this / spent.against, 3),
      });
    }
    const ratios = rows.map((row) => row.ratio as number);
    const commitOf = (checkout: string) =>
      spawnSync('git', ['-C', checkout, 'rev-parse', '--short', 'HEAD'], {
        encoding: 'utf8',
      }).stdout.trim() || null;
    writeResult('suggest-against', rows, {
      against,
      againstCommit: commitOf(against),
      thisCommit: commitOf(repoRoot),
      messages: messages.length,
      meanRatio: round(ratios.reduce((a, b) => a + b, 0) / ratios.length, 3),
    });
  } finally {
    await handle.close();
  }
}
