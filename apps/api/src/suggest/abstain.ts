/**
 * The calibrated score of a suggestion and the abstention threshold. The score is a logistic function of
 * evidence that means the same in every message: how much of what the message asks for (its need words,
 * weighted by how telling each is) the skill is about, and whether the lexical and semantic retrievals
 * agree on it. So 0.5 is the threshold everywhere; a message whose best skill stays under it gets
 * `abstained: true`.
 */

/** Evidence for one candidate. */
export interface Evidence {
  /** Idf-weighted share of the need's words the skill holds (name, description, headings, body; related terms count in part). */
  coverage: number;
  /** Same, counting only the skill's name, description and headings (what it is about). */
  topical: number;
  /** Whether both the lexical engine and the semantic model retrieved it near the top. */
  agreement: boolean;
}

/** Logistic weights, fitted on the development message set (bench/suggest/messages.dev.json). */
export const CALIBRATION = { coverage: 6, topical: 4, agreement: 0.8, bias: -5.2 } as const;

/** Score at or above which a skill is suggested; a message whose best is below it abstains. */
export const ABSTAIN_BELOW = 0.5;

/** A candidate's calibrated score in [0, 1]. */
export function calibratedScore(e: Evidence): number {
  const z =
    CALIBRATION.coverage * e.coverage +
    CALIBRATION.topical * e.topical +
    (e.agreement ? CALIBRATION.agreement : 0) +
    CALIBRATION.bias;
  return 1 / (1 + Math.exp(-z));
}

/** Whether a message abstains, given its best candidate's score. */
export function abstains(best: number | undefined, threshold = ABSTAIN_BELOW): boolean {
  return best === undefined || best < threshold;
}
