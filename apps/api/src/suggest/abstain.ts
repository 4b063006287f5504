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
  /** Whether both the lexical engine and the semantic model retrieved it in their first ten. */
  agreement: boolean;
}

/**
 * The reranker: a linear score over the evidence (weights set by hand on the development messages,
 * bench/suggest/messages.dev.json). Candidates are ordered by it.
 */
export const RERANK = {
  coverage: 2,
  topical: 3,
  topicalIdf: 0.6,
  allIdf: 0.2,
  fused: 2,
  agreement: 0.5,
} as const;

/**
 * Platt scaling of the reranker into the probability that the skill helps (fitted by bench/suggest/fit.py
 * on judged messages): the score means the same in every message, so one threshold serves all.
 */
export const PLATT = { scale: 0.81, bias: -6.16 } as const;

/** Score at or above which a skill is suggested; a message whose best is below it abstains. */
export const ABSTAIN_BELOW = 0.09;

/** The reranker's value for a candidate (higher is better; only the order matters). */
export function rerankValue(e: Evidence): number {
  return (
    RERANK.coverage * e.coverage +
    RERANK.topical * e.topical +
    RERANK.topicalIdf * Math.log1p(e.topicalIdf) +
    RERANK.allIdf * Math.log1p(e.allIdf) +
    RERANK.fused * e.fused +
    (e.agreement ? RERANK.agreement : 0)
  );
}

/** A candidate's calibrated score in [0, 1]: Platt scaling of its reranker value. */
export function calibratedScore(e: Evidence): number {
  return 1 / (1 + Math.exp(-(PLATT.scale * rerankValue(e) + PLATT.bias)));
}

/** Whether a message abstains, given its best candidate's score. */
export function abstains(best: number | undefined, threshold = ABSTAIN_BELOW): boolean {
  return best === undefined || best < threshold;
}

/** What a message's wording says about whether it holds a task for a skill (before any skill is scored). */
export interface TaskEvidence {
  /** It asks for something (an imperative, "can you", "I need", "how do I", something failing). */
  request: boolean;
  /** Every clause of it is small talk (greetings, thanks, farewells, chit-chat, questions about the assistant). */
  smallTalk: boolean;
  /** Its need words that are telling in the index (skills are about them, and most skills are not). */
  informative: number;
}

/**
 * How likely the message holds a task for a skill, from its wording (fitted by bench/suggest/fit.py on
 * half of the judged messages): a candidate's score is its calibrated score times this, so small talk and
 * messages without anything the index is about abstain however well some skill happens to match a word.
 */
export const TASK_PRIOR = { smallTalk: 0, noInformative: 0, noRequest: 0.3, request: 1 } as const;

/** The task prior of a message. */
export function taskPrior(t: TaskEvidence): number {
  if (t.smallTalk) return TASK_PRIOR.smallTalk;
  if (t.informative === 0) return TASK_PRIOR.noInformative;
  return t.request ? TASK_PRIOR.request : TASK_PRIOR.noRequest;
}
