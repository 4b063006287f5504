/**
 * `npm run bench -- suggest-stability [--remove 15] [--seeds 6] [--messages <file>]`: how much the
 * suggestions for the judged messages move when the index changes by a few skills none of them is about.
 * The suggestion model is rebuilt as skills come and go; a message's answer should move by what changed,
 * not flip between suggesting and abstaining because an unrelated skill arrived. The engines are built over
 * the suggestion benchmark's database (`atskills_suggest`, or BENCH_SUGGEST_DATABASE: seeded first when
 * empty) and over copies of it with `--remove` skills marked gone (drawn at random per seed from those no
 * judged message lists), and every judged message is answered by both. Per copy: messages whose
 * abstention flipped, whose first suggestion changed (both answering), those a skill gone was suggested
 * for (`reached`), and those it was not whose first suggestion or abstention changed all the same, the
 * mean and largest change of the best candidate's score, the share of the first five kept, and success@1
 * and recall@5 beside the full index's.
 * Writes bench/results/suggest-stability.json.
 */
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { Rng } from '../lib/rng.js';
import { round } from '../lib/stats.js';
import { copyKeys, figures } from './judgements.js';
import { defaultMessagesPath, loadMessages, type MessageJudgement } from './messages.js';
import { builtEngines, copyWithSkillsGone, suggestionCorpus } from './small-hubs.js';

/** One message's answer, as compared. */
interface Answered {
  ranking: string[];
  abstained: boolean;
  best: number;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      remove: { type: 'string', default: '15' },
      seeds: { type: 'string', default: '6' },
      messages: { type: 'string' },
    },
  });
  const remove = Number(values.remove);
  const seeds = Number(values.seeds);
  if (!Number.isInteger(remove) || remove < 1 || !Number.isInteger(seeds) || seeds < 1) {
    throw new Error('--remove and --seeds take whole numbers of at least 1');
  }
  const { source, sourceUrl, corpus, live } = await suggestionCorpus();
  const copyKey = copyKeys(corpus);
  const messagesFile = values.messages ?? defaultMessagesPath();
  const judged = loadMessages(messagesFile).flatMap((j) => {
    const relevant = j.relevant.filter((id) => live.has(id));
    return j.kind !== 'none' && relevant.length === 0 ? [] : [{ ...j, relevant }];
  });
  // Skills no judged message lists: removing them leaves every judgement as it was.
  const listed = new Set(judged.flatMap((j) => j.relevant));
  const unlisted = [...live].filter((id) => !listed.has(id)).sort();

  const full = await answerAll(sourceUrl, judged);
  const fullFigures = figures(
    judged.filter((j) => j.kind !== 'none').map((j) => ({ judgement: j, answer: full.get(j.id)! })),
    copyKey,
  );
  const table: BenchRow[] = [];
  const copies: Record<string, unknown>[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const rng = new Rng(seed * 104_729 + remove);
    const gone = new Set<string>();
    while (gone.size < Math.min(remove, unlisted.length)) gone.add(rng.pick(unlisted));
    const url = await copyWithSkillsGone(`${source}_stability`, source, 'identity = any($1::text[])', [
      ...gone,
    ]);
    const changed = await answerAll(url, judged);
    let flips = 0;
    let firstChanged = 0;
    // Messages the removal reached: a skill gone was among the full index's suggestions for it.
    let reached = 0;
    let unreachedMoved = 0;
    let deltaSum = 0;
    let deltaMax = 0;
    let keptSum = 0;
    for (const j of judged) {
      const a = full.get(j.id)!;
      const b = changed.get(j.id)!;
      if (a.abstained !== b.abstained) flips++;
      if (a.ranking.some((id) => gone.has(id))) reached++;
      else if (a.abstained !== b.abstained || a.ranking[0] !== b.ranking[0]) unreachedMoved++;
      if (!a.abstained && !b.abstained) {
        if (a.ranking[0] !== b.ranking[0]) firstChanged++;
      }
      const delta = Math.abs(a.best - b.best);
      deltaSum += delta;
      deltaMax = Math.max(deltaMax, delta);
      const top = new Set(a.ranking.slice(0, 5));
      const kept = b.ranking.slice(0, 5).filter((id) => top.has(id)).length;
      keptSum += top.size === 0 ? 1 : kept / top.size;
    }
    const f = figures(
      judged.filter((j) => j.kind !== 'none').map((j) => ({ judgement: j, answer: changed.get(j.id)! })),
      copyKey,
    );
    const row = {
      seed,
      'skills gone': gone.size,
      'abstention flipped': flips,
      'first changed': firstChanged,
      reached,
      'unreached moved': unreachedMoved,
      'mean |Δ best|': round(deltaSum / judged.length, 4),
      'max |Δ best|': round(deltaMax, 3),
      'top 5 kept': round(keptSum / judged.length, 3),
      'success@1': f.successAt1,
      'recall@5': f.recallAt5,
    };
    table.push(row);
    copies.push({ ...row, gone: [...gone].sort() });
  }
  const mean = (key: string) => round(table.reduce((sum, r) => sum + Number(r[key]), 0) / table.length, 4);
  table.push({
    seed: 'mean',
    'skills gone': remove,
    'abstention flipped': mean('abstention flipped'),
    'first changed': mean('first changed'),
    reached: mean('reached'),
    'unreached moved': mean('unreached moved'),
    'mean |Δ best|': mean('mean |Δ best|'),
    'max |Δ best|': mean('max |Δ best|'),
    'top 5 kept': mean('top 5 kept'),
    'success@1': mean('success@1'),
    'recall@5': mean('recall@5'),
  });
  console.error(
    `full index: ${live.size} skills, ${judged.length} messages; success@1 ${fullFigures.successAt1}, recall@5 ${fullFigures.recallAt5}`,
  );
  writeResult('suggest-stability', table, {
    messagesFile: messagesFile.replace(/^.*\/bench\//, 'bench/'),
    messages: judged.length,
    fullIndex: { skills: live.size, successAt1: fullFigures.successAt1, recallAt5: fullFigures.recallAt5 },
    copies,
  });
  process.exit(0);
}

/** Builds both engines over the database at `url` and answers every message (five suggestions). */
async function answerAll(url: string, judged: MessageJudgement[]): Promise<Map<string, Answered>> {
  const handle = connectPostgres({ url, max: 4 });
  try {
    const engines = await builtEngines(handle.db);
    const answers = new Map<string, Answered>();
    for (const j of judged) {
      const s = await engines.suggest.suggest(j.message, ANONYMOUS_VIEWER, 5);
      answers.set(j.id, {
        ranking: s.results.map((r) => r.hit.identity),
        abstained: s.abstained,
        best: s.best ?? 0,
      });
    }
    await engines.close();
    return answers;
  } finally {
    await handle.close();
  }
}
