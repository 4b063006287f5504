/**
 * The reranker, the calibrated score of a suggestion, and the abstention threshold. The evidence means the
 * same in every message: how much of what the message asks for (its need words, weighted by how telling each
 * is) the skill is about, how strongly the retrievals ranked it, and whether the lexical and semantic
 * retrievals agree on it. Its reranker value is mapped to a probability (Platt scaling), so one threshold
 * serves every message; a message whose best skill stays under it gets `abstained: true`.
 */

/** Evidence for one candidate. */
export interface Evidence {
  /** Idf-weighted share of the need's words the skill holds (name, description, headings, body; related terms count in part). */
  coverage: number;
  /** Same, counting only the skill's name, description and headings (what it is about). */
  topical: number;
  /** The idf mass behind `topical` and `coverage` (how much specific evidence, however long the message). */
  topicalIdf: number;
  allIdf: number;
  /** Its fused reciprocal-rank score over the best candidate's (1 for the best fused). */
  fused: number;
  /** Cosine of the skill's LSA vector to the whole request's (apps/api/src/suggest/dense.ts). */
  dense: number;
  /** Idf-weighted share of the skill's name, and of its description, that the message holds. */
  nameCovered: number;
  descriptionCovered: number;
  /** 1 / (1 + rank) in the whole request's lexical, term-model and LSA lists (0 when absent). */
  lexicalRank: number;
  semanticRank: number;
  lsaRank: number;
  /** log(1 + stars). */
  stars: number;
  /** Whether both the lexical engine and the semantic model retrieved it in their first ten. */
  agreement: boolean;
  /**
   * 1 / (1 + its best rank) in the lexical lists of the message's needs searched apart (`lexicalRank` for a
   * message of one need; 0 when no list holds it): a skill the search engine puts first for one clause of a
   * long message answers that clause, however little of the rest of the message it shares.
   */
  partLexicalRank: number;
  /** The best LSA cosine of the skill to one need of the message (`dense` for a message of one need). */
  partDense: number;
  /** The best coverage of one need of the message (`coverage` for a message of one need). */
  partCoverage: number;
  /**
   * `descriptionCovered` over the best among the message's candidates: which skill's description the message
   * matches most, whatever the message's length (the absolute share shrinks as a message grows).
   */
  descriptionLead: number;
  /** Cosine of the skill's embedding (EMBEDDINGS_URL) to the whole request's; 0 without the service. */
  service: number;
  /** The best such cosine to one need of the message (`service` for a message of one need). */
  partService: number;
}

/**
 * The reranker: a linear score over the evidence, fitted by bench/suggest/fit-rerank.py (a listwise
 * softmax over each message's candidates, then Platt scaling; 5-fold cross-validation over the judged
 * benchmark messages gives the held-out figures, these weights are the fit on all of them). Candidates are
 * ordered by it. `topicalIdf` and `allIdf` enter as log(1 + x), `agreement` as 0 or 1. About two dozen
 * multiply-adds per candidate. Fitted while each need of a message still had its own term-model and LSA
 * lists; refitting without them changed no in-sample figure by more than 0.003 but put two borderline
 * answerable messages of the other sets under the threshold, so these stay (docs/performance.md).
 */
export const RERANK = {
  coverage: 0.2141,
  topical: 0.0238,
  topicalIdf: 0.1816,
  allIdf: 1.3036,
  fused: 1.5079,
  agreement: 0.5999,
  dense: 0.8752,
  nameCovered: 0.949,
  descriptionCovered: 0.6805,
  partLexicalRank: 1.4852,
  partDense: 0.7068,
  partCoverage: 0.6229,
  descriptionLead: 1.9303,
} as const;

/**
 * Platt scaling of the reranker into the probability that the skill helps (fitted with it, so the scale
 * is folded into RERANK): the score means the same in every message, so one threshold serves all.
 */
export const PLATT = { scale: 1, bias: -10.8127 } as const;

/**
 * The score a suggestion shows: the chance it helps, from its Platt logit and how far that stands under the
 * message's best candidate's (`shownScore`), fitted by fit-rerank.py on every candidate of the judged messages
 * and the short requests pooled, the reranker fixed. Platt alone is fitted on all 40 candidates pooled, so it
 * under-states a first result (held out, first results it scored 0.1-0.2 were judged right 0.29 of the time,
 * 0.2-0.4 0.50) and over-states a later one near the top (0.8-1: 0.67): a candidate's chance also depends on
 * the candidates beside it. Held out (5 folds) the shown score takes the Brier score of first results from
 * 0.119 to 0.109 and of results 2-5 from 0.120 to 0.114. Decisions stay on Platt's scale (ABSTAIN_BELOW, the
 * result floor), as they were fitted: only what a caller reads changes.
 */
export const SHOWN = { logit: 0.7204, gap: 0.3354, bias: 0.5583 } as const;

/**
 * Score at or above which a skill is suggested, chosen by the same cross-validation: the lowest threshold
 * that abstains on 75% of the judged messages no skill fits, moved to the middle of the range over which no
 * further answerable message abstains (the edge itself abstained on fewer unseen messages).
 */
export const ABSTAIN_BELOW = 0.09;

/** The evidence a reranker may weigh, in the order its terms are summed (the shipped weights' order). */
export const RERANK_FEATURES = [
  'coverage',
  'topical',
  'topicalIdf',
  'allIdf',
  'fused',
  'agreement',
  'dense',
  'nameCovered',
  'descriptionCovered',
  'partLexicalRank',
  'partDense',
  'partCoverage',
  'descriptionLead',
  'service',
  'partService',
] as const;

export type RerankFeature = (typeof RERANK_FEATURES)[number];

/** Evidence only an embeddings service gives: a reranker weighing it needs EMBEDDINGS_URL. */
export const SERVICE_FEATURES: readonly RerankFeature[] = ['service', 'partService'];

/**
 * A reranker: weights over the evidence, its Platt calibration and its abstention threshold. The shipped
 * one is fitted on the judged messages without an embeddings service; an operator with one fits their own
 * (`fit-rerank.py --json`, loaded through SUGGEST_RERANKER: reranker-file.ts).
 */
export interface Reranker {
  readonly weights: Readonly<Partial<Record<RerankFeature, number>>>;
  readonly platt: { readonly scale: number; readonly bias: number };
  readonly abstainBelow: number;
  /** The shown score's calibration (SHOWN); without it a suggestion shows its Platt score. */
  readonly shown?: { readonly logit: number; readonly gap: number; readonly bias: number };
}

/** What the hub answers with unless SUGGEST_RERANKER names another reranker. */
export const SHIPPED_RERANKER: Reranker = {
  weights: RERANK,
  platt: PLATT,
  abstainBelow: ABSTAIN_BELOW,
  shown: SHOWN,
};

/** A feature as the reranker reads it: idf masses as log(1 + x), agreement as 0 or 1. */
function featureValue(e: Evidence, feature: RerankFeature): number {
  switch (feature) {
    case 'topicalIdf':
    case 'allIdf':
      return Math.log1p(e[feature]);
    case 'agreement':
      return e.agreement ? 1 : 0;
    default:
      return e[feature];
  }
}

/** The features a reranker weighs, with their weights, in summation order (computed once per reranker). */
const weighed = new WeakMap<Reranker, [RerankFeature, number][]>();
function termsOf(r: Reranker): [RerankFeature, number][] {
  let terms = weighed.get(r);
  if (!terms) {
    terms = RERANK_FEATURES.flatMap((f) => {
      const w = r.weights[f];
      return w === undefined ? [] : [[f, w] as [RerankFeature, number]];
    });
    weighed.set(r, terms);
  }
  return terms;
}

/** Whether a reranker weighs evidence only an embeddings service gives. */
export function weighsService(r: Reranker): boolean {
  return SERVICE_FEATURES.some((f) => (r.weights[f] ?? 0) !== 0);
}

/** The reranker's value for a candidate (higher is better; only the order matters). */
export function rerankValue(e: Evidence, r: Reranker = SHIPPED_RERANKER): number {
  let sum = 0;
  for (const [feature, weight] of termsOf(r)) sum += weight * featureValue(e, feature);
  return sum;
}

/** The logistic function: a logit as a probability. */
function logistic(logit: number): number {
  return 1 / (1 + Math.exp(-logit));
}

/** A reranker value's Platt logit (what `calibrated` turns into a probability, and SHOWN reads). */
function plattLogit(value: number, r: Reranker): number {
  return r.platt.scale * value + r.platt.bias;
}

/** A reranker value's calibrated score in [0, 1]: its Platt scaling. */
export function calibrated(value: number, r: Reranker = SHIPPED_RERANKER): number {
  return logistic(plattLogit(value, r));
}

/**
 * The score a candidate shows (before the message's task prior): SHOWN's calibration of its reranker value
 * and of the best candidate's value in the message; its Platt score for a reranker without one. Rises with
 * the value at a fixed best (a reranker file's `shown.logit` must be positive and `shown.gap` not negative),
 * so it orders a message's candidates as Platt does.
 */
export function shownScore(value: number, bestValue: number, r: Reranker = SHIPPED_RERANKER): number {
  if (!r.shown) return calibrated(value, r);
  const gap = r.platt.scale * (value - bestValue);
  return logistic(r.shown.logit * plattLogit(value, r) + r.shown.gap * gap + r.shown.bias);
}

/** A candidate's calibrated score in [0, 1]: Platt scaling of its reranker value. */
export function calibratedScore(e: Evidence, r: Reranker = SHIPPED_RERANKER): number {
  return calibrated(rerankValue(e, r), r);
}

/** Whether a message abstains, given its best candidate's score. */
export function abstains(best: number | undefined, threshold = ABSTAIN_BELOW): boolean {
  return best === undefined || best < threshold;
}

/** What a message's wording says about whether it holds a task for a skill (before any skill is scored). */
export interface TaskEvidence {
  /**
   * It asks for something (an imperative, "can you", "I need", "how do I", something failing). Reported in
   * the explain output; the prior does not use it (see TASK_PRIOR).
   */
  request: boolean;
  /** Every clause of it is small talk (greetings, thanks, farewells, chit-chat, questions about the assistant). */
  smallTalk: boolean;
  /** Its need words that are telling in the index (skills are about them, and most skills are not). */
  informative: number;
}

/**
 * How likely the message holds a task for a skill, from its wording: a candidate's score is its calibrated
 * score times this, so small talk and messages without anything the index is about abstain however well some
 * skill happens to match a word, and a message naming at most THIN_WORDS telling words ("who won the World
 * Cup in 2010?") needs a stronger match. Fixed, not fitted: choosing a prior for messages that ask for
 * nothing and `thin` per fold with the threshold overfitted (held out, abstention on kind none fell to 0.70
 * over shuffled folds), and a message that asks for nothing in so many words ("my resume needs to match
 * this job ad better") may still want a skill, so whether it asks changes nothing.
 */
export const TASK_PRIOR = { smallTalk: 0, noInformative: 0, thin: 0.3 } as const;

/** A word is telling when some skills are about it, and at most this share of them (not "code"). */
export const TELLING_MAX_SHARE = 0.1;

/**
 * ...or at most this many, whatever the hub's size. A tenth of a hub of a few dozen skills is one skill, so
 * in the demo (12 skills) "release", which its changelog and release-notes skills are about, was no telling
 * word and "write the changelog for the new release" abstained under the thin prior. In hubs of 15 skills
 * (`npm run bench -- suggest-small`, the judged set with the short requests) two took false abstention from
 * 0.068 to 0.035 and success@1 from 0.919 to 0.951, for abstention on kind none 0.926 -> 0.899; three cost
 * more (docs/performance.md, "Suggestions in a small hub"). From 20 skills up a tenth is two or more.
 */
export const TELLING_MIN_SKILLS = 2;

/** Whether a word `skillsAbout` of a hub's `hubSize` skills are about (name, description, headings) is telling. */
export function isTelling(skillsAbout: number, hubSize: number): boolean {
  return skillsAbout >= 1 && skillsAbout <= Math.max(TELLING_MIN_SKILLS, TELLING_MAX_SHARE * hubSize);
}

/** At most this many telling words: a message names too little for most skills (TASK_PRIOR.thin). */
export const THIN_WORDS = 2;

/**
 * The task prior of a message; `namesSkill`: the message holds the whole name of its best-ranked candidate.
 * A message that names the skill it is answered with ("do a code review": code-review; "write a skill":
 * writing-skills) named enough for the thin prior's doubt: it asks for what that skill is called. Its best
 * candidate only: a skill named with one common word ("research", "start", "forecast", "update") among the
 * candidates had answered "research the history of Rome" and "forecast the weather for Paris" with other
 * skills. Among the judged messages at 1,482 skills no message under the thin prior names its best
 * candidate (all of them are of kind none), nor does any answer of the small-hub benchmark change; what
 * changes is the shortest requests, which the judged sets hold few of (docs/performance.md, "Requests that
 * name a skill").
 */
export function taskPrior(t: TaskEvidence, namesSkill = false): number {
  if (t.smallTalk) return TASK_PRIOR.smallTalk;
  if (t.informative === 0) return TASK_PRIOR.noInformative;
  return t.informative <= THIN_WORDS && !namesSkill ? TASK_PRIOR.thin : 1;
}

/** A candidate's `nameCovered` at which the message holds its whole name (an idf-weighted share, so 1 up to rounding). */
export const NAMED_WHOLE = 1 - 1e-9;
