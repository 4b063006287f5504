/**
 * How a suggestion ranking over judged agent messages (messages.ts) is scored. Shared by `npm run bench --
 * suggest` and the suggestion relevance suite.
 */
import { copyKey } from '../../apps/api/src/suggest/copies.js';
import type { SuggestAnswer } from '../../apps/api/src/suggest/engine.js';
import { MESSAGE_KINDS, type MessageJudgement, type MessageKind } from './messages.js';

// The message file's format and loader live in messages.ts; this type stays importable from here for the
// relevance suite.
export type { MessageJudgement };

/** What one message got: skill identities best first, and whether the answer abstained. */
export interface Answer {
  ranking: string[];
  abstained: boolean;
}

/** Figures over a set of messages. */
export interface SuggestFigures {
  messages: number;
  successAt1: number;
  recallAt5: number;
  mrrAt10: number;
  /** Share of messages answered with abstention (on kind none: the abstention rate; else false abstention). */
  abstained: number;
  /** Kind multi: share of messages with every need covered in the first 5. */
  needsCoveredAt5?: number;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** The skill an identity is a copy of, by a `copyKeys` map (an identity without a key stands alone). */
const skillOf = (copyOf: ReadonlyMap<string, string>, identity: string) => copyOf.get(identity) ?? identity;

/**
 * Scores answers: success@1, recall@5 (of up to 5 relevant skills, copies of one skill counted once by
 * `copyOf` (a `copyKeys` map; without it every identity stands alone); for multi, every need counts: the mean
 * over needs of whether it is covered when `needs` is given), MRR@10, and the abstention rate.
 */
export function figures(
  results: { judgement: MessageJudgement; answer: Answer }[],
  copyOf: ReadonlyMap<string, string> = new Map(),
): SuggestFigures {
  let s1 = 0;
  let r5 = 0;
  let mrr = 0;
  let abstained = 0;
  let covered = 0;
  let multi = 0;
  for (const { judgement, answer } of results) {
    if (answer.abstained) abstained++;
    const relevant = new Set(judgement.relevant);
    if (relevant.size === 0) continue;
    const ranking = answer.abstained ? [] : answer.ranking;
    if (ranking[0] && relevant.has(ranking[0])) s1++;
    const top5 = ranking.slice(0, 5);
    if (judgement.needs) {
      multi++;
      const hit = judgement.needs.filter((n) => n.some((id) => top5.includes(id))).length;
      r5 += hit / judgement.needs.length;
      if (hit === judgement.needs.length) covered++;
    } else {
      // Showing a second copy of a relevant skill finds nothing new: recall counts skills, not copies.
      const skills = new Set([...relevant].map((id) => skillOf(copyOf, id)));
      const found = new Set(top5.filter((id) => relevant.has(id)).map((id) => skillOf(copyOf, id)));
      r5 += found.size / Math.min(5, skills.size);
    }
    const rank = ranking.slice(0, 10).findIndex((id) => relevant.has(id));
    if (rank >= 0) mrr += 1 / (rank + 1);
  }
  const n = Math.max(1, results.length);
  return {
    messages: results.length,
    successAt1: round(s1 / n),
    recallAt5: round(r5 / n),
    mrrAt10: round(mrr / n),
    abstained: round(abstained / n),
    ...(multi > 0 ? { needsCoveredAt5: round(covered / multi) } : {}),
  };
}

/** Figures per kind, and over every answerable message. */
export function figuresByKind(
  results: { judgement: MessageJudgement; answer: Answer }[],
  copyOf?: ReadonlyMap<string, string>,
): Record<MessageKind | 'answerable', SuggestFigures> {
  const out = {
    answerable: figures(
      results.filter((r) => r.judgement.kind !== 'none'),
      copyOf,
    ),
  } as Record<MessageKind | 'answerable', SuggestFigures>;
  for (const kind of MESSAGE_KINDS)
    out[kind] = figures(
      results.filter((r) => r.judgement.kind === kind),
      copyOf,
    );
  return out;
}

/**
 * Each skill's copy key (`copyKey`: name and description, what the engine's `copyGroups` groups a skill's
 * copies by to show it once), what `explainLine` records as `copyOf` and `figures` counts a skill by.
 */
export function copyKeys(
  documents: readonly { identity: string; name: string; description: string }[],
): Map<string, string> {
  return new Map(documents.map((d) => [d.identity, copyKey(d)]));
}

/**
 * One line of an explain file (what bench/suggest/fit-rerank.py reads): the message's task evidence and its
 * reranked candidates with their evidence, plus what the fit needs to score a reranking as the benchmark
 * does: the judged skills' count (identities, and skills with copies counted once), which need each
 * candidate answers (multi), copies of one skill (same `copyKeys` key), and the candidates' coverage of each
 * need (diversification). `answer` comes from an engine built with `explain: true`.
 */
export function explainLine(
  judgement: MessageJudgement,
  answer: SuggestAnswer,
  copyOf: ReadonlyMap<string, string>,
): Record<string, unknown> {
  return {
    id: judgement.id,
    kind: judgement.kind,
    task: answer.task,
    relevantCount: judgement.relevant.length,
    relevantSkills: new Set(judgement.relevant.map((id) => skillOf(copyOf, id))).size,
    needCount: judgement.needs?.length ?? 0,
    candidates: (answer.explained ?? []).map((c) => ({
      ...c.evidence,
      identity: c.identity,
      copyOf: copyOf.get(c.identity),
      parts: c.parts,
      ranks: c.ranks,
      needs: (judgement.needs ?? []).flatMap((n, i) => (n.includes(c.identity) ? [i] : [])),
      relevant: judgement.relevant.includes(c.identity),
    })),
  };
}

/** Score bands of `scoreBands` (lower bounds; the last band runs to 1). */
export const SCORE_BANDS = [0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8] as const;

/** How often a shown suggestion in one score band is a judged skill: first results apart from the rest. */
export interface ScoreBand {
  from: number;
  to: number;
  first: { shown: number; relevant: number };
  later: { shown: number; relevant: number };
}

/**
 * What a suggestion's score means, per shown result (not only the first): over answerable messages that did
 * not abstain, each result of the first `depth` by score band, and the share of them the judgement lists (a
 * copy of a listed skill counts as listed). Kind none counts too: all it shows is unhelpful. An unjudged
 * result counts as not relevant (the judgement was pooled from every ranking's first five).
 */
export function scoreBands(
  results: { judgement: MessageJudgement; answer: Answer; scores: number[] }[],
  copyOf: ReadonlyMap<string, string>,
  depth = 5,
): ScoreBand[] {
  const bands = SCORE_BANDS.map((from, i) => ({
    from,
    to: SCORE_BANDS[i + 1] ?? 1,
    first: { shown: 0, relevant: 0 },
    later: { shown: 0, relevant: 0 },
  }));
  for (const { judgement, answer, scores } of results) {
    if (answer.abstained) continue;
    const skills = new Set(judgement.relevant.map((id) => skillOf(copyOf, id)));
    answer.ranking.slice(0, depth).forEach((id, i) => {
      const score = scores[i] ?? 0;
      const band = bands.findLast((b) => score >= b.from) ?? bands[0]!;
      const tally = i === 0 ? band.first : band.later;
      tally.shown++;
      if (skills.has(skillOf(copyOf, id))) tally.relevant++;
    });
  }
  return bands;
}

/** What the user-prompt hook would append at one score floor (results under it left out). */
export interface HookView {
  floor: number;
  /** Suggestions appended per message, over every message (kind none included). */
  linesPerMessage: number;
  /** Share of the appended suggestions the judgement lists. */
  precision: number;
  /** Answerable messages with a judged skill among those appended. */
  hitRate: number;
}

/**
 * The hook's view of the same answers: the first `limit` results (the hook asks for 3) kept when their score
 * reaches each floor. Fewer lines in every prompt against judged skills no longer shown.
 */
export function hookViews(
  results: { judgement: MessageJudgement; answer: Answer; scores: number[] }[],
  copyOf: ReadonlyMap<string, string>,
  floors: readonly number[],
  limit = 3,
): HookView[] {
  return floors.map((floor) => {
    let lines = 0;
    let relevantLines = 0;
    let hits = 0;
    let answerable = 0;
    for (const { judgement, answer, scores } of results) {
      const skills = new Set(judgement.relevant.map((id) => skillOf(copyOf, id)));
      if (judgement.kind !== 'none') answerable++;
      if (answer.abstained) continue;
      const shown = answer.ranking.slice(0, limit).filter((_, i) => (scores[i] ?? 0) >= floor);
      const relevant = shown.filter((id) => skills.has(skillOf(copyOf, id))).length;
      lines += shown.length;
      relevantLines += relevant;
      if (relevant > 0) hits++;
    }
    return {
      floor,
      linesPerMessage: round(lines / Math.max(1, results.length)),
      precision: round(relevantLines / Math.max(1, lines)),
      hitRate: round(hits / Math.max(1, answerable)),
    };
  });
}
