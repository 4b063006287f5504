/**
 * `npm run bench -- suggest-small [--sizes 15,40,150,500] [--seeds 12] [--messages <file>[,<file>...]] [--private]`:
 * suggestions in a hub that holds few skills (a team's own hub, the demo), where the shipped reranker, its
 * abstention threshold and the task prior's "telling word" rule (a word a tenth of the skills at most are
 * about, or two) were fitted at 1,482.
 * For each size and seed: the judged skills of messages drawn at random, message by message, until they make
 * half of the size, then skills drawn at random from the rest of the shared corpus; every other skill is
 * marked gone in a copy of the suggestion benchmark's database (`atskills_suggest`, or
 * BENCH_SUGGEST_DATABASE: seeded first when empty). Both engines are built over what is left and answer the
 * messages whose live judged skills were all kept, and every kind-none message. Prints the mean over seeds
 * of success@1, recall@5 and both abstention rates, with `/search` given the whole message beside them, and
 * writes bench/results/suggest-small.json (several message files are judged together: with the short
 * requests, `--messages bench/suggest/messages.json,bench/suggest/messages.short.json`, suggest-small-short.json).
 * `--private`: every kept skill private to one team (their owner set to `team`), answered for its members: a
 * team's hub of its own private skills, whose related terms and LSA model are learnt from its skills, as no
 * outsider reads any skill there (SemanticModel.learningGroup); into suggest-small-private.json.
 */
import { parseArgs } from 'node:util';
import { connectPostgres, type Database } from '@atskills/db';
import pg from 'pg';
import { createMemoryEngine } from '../../apps/api/src/search/memory-engine.js';
import { createPostgresEngine } from '../../apps/api/src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { createSuggestEngine, type SuggestEngineOptions } from '../../apps/api/src/suggest/engine.js';
import { copyDatabase, ensureDatabase } from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { Rng } from '../lib/rng.js';
import { round } from '../lib/stats.js';
import { corpusDocuments } from '../relevance/judgements.js';
import { type Answer, copyKeys, figures } from './judgements.js';
import { defaultMessagesPath, loadMessages, type MessageJudgement, messageSetName } from './messages.js';

const DEPTH = 10;
/** The one team of a `--private` hub. */
const PRIVATE_TEAM = 'team';

/** The figures of one hub (one size, one seed). */
interface HubFigures {
  skills: number;
  answerable: number;
  successAt1: number;
  recallAt5: number;
  abstainedOnNone: number;
  falseAbstention: number;
  searchSuccessAt1: number;
  searchRecallAt5: number;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sizes: { type: 'string', default: '15,40,150,500' },
      seeds: { type: 'string', default: '12' },
      messages: { type: 'string' },
      private: { type: 'boolean', default: false },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  const seeds = Number(values.seeds);
  if (sizes.some((n) => !Number.isInteger(n) || n < 2) || !Number.isInteger(seeds) || seeds < 1) {
    throw new Error('--sizes takes whole numbers of at least 2, --seeds a whole number of at least 1');
  }
  const { source, live } = await suggestionCorpus();
  const messagesFiles = (values.messages ?? defaultMessagesPath()).split(',');
  const judgements = messagesFiles.flatMap((file) => loadMessages(file));

  const table: BenchRow[] = [];
  const bySize: Record<string, HubFigures[]> = {};
  for (const size of sizes) {
    const hubs: HubFigures[] = [];
    for (let seed = 1; seed <= seeds; seed++) {
      const kept = keptSkills(judgements, [...live], size, new Rng(seed * 7919 + size));
      hubs.push(await judgeHub(`${source}_small`, source, kept, live, judgements, values.private));
    }
    bySize[size] = hubs;
    const mean = (pick: (h: HubFigures) => number) =>
      round(hubs.reduce((sum, h) => sum + pick(h), 0) / hubs.length, 3);
    table.push({
      skills: size,
      hubs: seeds,
      'answerable a hub': mean((h) => h.answerable),
      'success@1': mean((h) => h.successAt1),
      'recall@5': mean((h) => h.recallAt5),
      'abstains on none': mean((h) => h.abstainedOnNone),
      'false abstention': mean((h) => h.falseAbstention),
      '/search success@1': mean((h) => h.searchSuccessAt1),
      '/search recall@5': mean((h) => h.searchRecallAt5),
    });
  }
  const sets = messagesFiles.map(messageSetName).filter((set) => set !== '');
  writeResult(['suggest-small', ...sets, ...(values.private ? ['private'] : [])].join('-'), table, {
    messagesFiles: messagesFiles.map((file) => file.replace(/^.*\/bench\//, 'bench/')),
    bySize,
  });
  process.exit(0);
}

/**
 * The suggestion benchmark's database (`atskills_suggest`, or BENCH_SUGGEST_DATABASE; seeded when empty):
 * its name and URL, its skills as the benchmark reads them, and their identities.
 */
export async function suggestionCorpus(): Promise<{
  source: string;
  sourceUrl: string;
  corpus: Awaited<ReturnType<typeof corpusDocuments>>;
  live: Set<string>;
}> {
  const source = process.env.BENCH_SUGGEST_DATABASE ?? 'atskills_suggest';
  const sourceUrl = await ensureDatabase(source, false);
  const seeding = connectPostgres({ url: sourceUrl, max: 2 });
  const corpus = await corpusDocuments(seeding.db, sourceUrl).finally(() => seeding.close());
  return { source, sourceUrl, corpus, live: new Set(corpus.map((r) => r.identity)) };
}

/**
 * The in-memory search engine and the suggestion engine built over `db` (no memory budget), as the
 * suggestion benchmarks that answer over a database of their own use them; `close` closes both.
 */
export async function builtEngines(db: Database, options: Partial<SuggestEngineOptions> = {}) {
  const memory = createMemoryEngine(db, createPostgresEngine(db), { maxBytes: 2 ** 32 });
  await memory.build();
  const suggest = createSuggestEngine(db, memory, { maxBytes: 2 ** 32, ...options });
  await suggest.build();
  return {
    memory,
    suggest,
    async close() {
      await suggest.close();
      await memory.close();
    },
  };
}

/**
 * The identities a hub of `size` keeps: the live judged skills of messages taken in a random order, a
 * message's all or none, until they make half of `size`; then other skills at random.
 */
export function keptSkills(
  judgements: MessageJudgement[],
  live: string[],
  size: number,
  rng: Rng,
): Set<string> {
  const keep = new Set<string>();
  const liveSet = new Set(live);
  const answerable = judgements.filter((j) => j.kind !== 'none');
  // Fisher-Yates, seeded: the messages whose skills the hub is built around.
  for (let i = answerable.length - 1; i > 0; i--) {
    const k = rng.int(0, i);
    [answerable[i], answerable[k]] = [answerable[k]!, answerable[i]!];
  }
  for (const j of answerable) {
    const skills = j.relevant.filter((id) => liveSet.has(id) && !keep.has(id));
    if (skills.length > 0 && keep.size + skills.length <= size / 2) for (const id of skills) keep.add(id);
  }
  while (keep.size < Math.min(size, live.length)) keep.add(rng.pick(live));
  return keep;
}

/**
 * A fresh copy of database `source` named `name` in which the skills `where` selects (a condition on
 * `identity`, `$1` the text array `identities`) are marked gone; its URL.
 */
export async function copyWithSkillsGone(
  name: string,
  source: string,
  where: string,
  identities: string[],
): Promise<string> {
  const { url } = await copyDatabase(name, source, true);
  const marking = new pg.Client({ connectionString: url });
  await marking.connect();
  try {
    await marking.query(`update skills set gone_at = now() where ${where}`, [identities]);
  } finally {
    await marking.end();
  }
  return url;
}

/** Builds both engines over a copy of `source` holding only `kept`, and judges the messages it can answer. */
async function judgeHub(
  name: string,
  source: string,
  kept: Set<string>,
  live: Set<string>,
  judgements: MessageJudgement[],
  keptPrivate = false,
): Promise<HubFigures> {
  const url = await copyWithSkillsGone(name, source, 'not (identity = any($1::text[]))', [...kept]);
  if (keptPrivate) {
    const marking = new pg.Client({ connectionString: url });
    await marking.connect();
    await marking
      .query(`update skills set visibility = 'private', owner = '${PRIVATE_TEAM}' where gone_at is null`)
      .finally(() => marking.end());
  }
  const handle = connectPostgres({ url, max: 4 });
  try {
    const rows = await corpusDocuments(handle.db, url);
    // The hub's team reads every kept skill.
    const viewer = keptPrivate ? { isAdmin: false, readableNamespaces: [PRIVATE_TEAM] } : ANONYMOUS_VIEWER;
    const copyKey = copyKeys(rows);
    const engines = await builtEngines(handle.db);
    const { memory, suggest } = engines;
    // A message is judged when the hub kept every one of its skills the corpus holds.
    const judged = judgements.flatMap((j) => {
      if (j.kind === 'none') return [j];
      const held = j.relevant.filter((id) => live.has(id));
      if (held.length === 0 || !held.every((id) => kept.has(id))) return [];
      const needs = j.needs?.map((n) => n.filter((id) => kept.has(id))).filter((n) => n.length > 0);
      return [{ ...j, relevant: held, ...(needs ? { needs } : {}) }];
    });
    const suggested: { judgement: MessageJudgement; answer: Answer }[] = [];
    const searched: typeof suggested = [];
    for (const judgement of judged) {
      const s = await suggest.suggest(judgement.message, viewer, DEPTH);
      suggested.push({
        judgement,
        answer: { ranking: s.results.map((r) => r.hit.identity), abstained: s.abstained },
      });
      const page = await memory.search(judgement.message, {}, viewer, DEPTH, undefined);
      searched.push({
        judgement,
        answer: {
          ranking: page.hits.filter((h) => h.kind === 'skill').map((h) => h.identity),
          abstained: false,
        },
      });
    }
    await engines.close();
    const answerable = <T extends { judgement: MessageJudgement }>(list: T[]) =>
      list.filter((r) => r.judgement.kind !== 'none');
    const f = figures(answerable(suggested), copyKey);
    const search = figures(answerable(searched), copyKey);
    return {
      skills: rows.length,
      answerable: f.messages,
      successAt1: f.successAt1,
      recallAt5: f.recallAt5,
      abstainedOnNone: figures(
        suggested.filter((r) => r.judgement.kind === 'none'),
        copyKey,
      ).abstained,
      falseAbstention: f.abstained,
      searchSuccessAt1: search.successAt1,
      searchRecallAt5: search.recallAt5,
    };
  } finally {
    await handle.close();
  }
}
