/**
 * What became of each suggestion request, on /metrics: answered, abstained (and why), refused, abandoned;
 * and where the best candidates' scores sit.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { ABSTAIN_BELOW } from './abstain.js';
import {
  SuggestAbandonedError,
  type SuggestAnswer,
  type SuggestEngine,
  SuggestOverloadedError,
  SuggestUnavailableError,
} from './engine.js';

/** What became of a suggestion request, as `atskills_suggestions_total` counts it. */
const OUTCOMES = ['answered', 'no_task', 'no_fit', 'overloaded', 'abandoned', 'unavailable'] as const;
type Outcome = (typeof OUTCOMES)[number];

/** The outcome of an answer. */
function answered(answer: SuggestAnswer): Outcome {
  if (!answer.abstained) return 'answered';
  return answer.abstention === 'no-task' ? 'no_task' : 'no_fit';
}

/** The outcome of what the engine threw instead of answering (undefined: an error of no known kind). */
function refused(err: unknown): Outcome | undefined {
  if (err instanceof SuggestOverloadedError) return 'overloaded';
  if (err instanceof SuggestAbandonedError) return 'abandoned';
  if (err instanceof SuggestUnavailableError) return 'unavailable';
  return undefined;
}

/**
 * The engine, counting what became of every suggestion asked of it (HTTP, MCP and the web page all ask
 * through it) and the best candidate's score of those it retrieved for: in production, with no judged
 * messages, the share abstaining and where the best scores sit are how an operator sees the suggestions
 * hold up as the index grows (the score runs under the truth among 55,000 skills: docs/performance.md).
 */
export function countOutcomes(registry: Registry, engine: SuggestEngine): SuggestEngine {
  const registers = [registry];
  const outcomes = new Counter({
    name: 'atskills_suggestions_total',
    help: 'Suggestion requests by outcome: answered, abstained (no_task: the message asks for nothing a skill does; no_fit: no skill scored over the threshold), refused (overloaded: past the caller deadline; unavailable: the model is not ready), or abandoned by the caller',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of OUTCOMES) outcomes.inc({ outcome }, 0);
  const bestScore = new Histogram({
    name: 'atskills_suggest_best_score',
    help: 'The best candidate score of each suggestion request that was retrieved for (answered or no_fit); under the threshold it abstains',
    buckets: [...new Set([0.01, 0.05, ABSTAIN_BELOW, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1])].sort(
      (a, b) => a - b,
    ),
    registers,
  });
  return {
    ...engine,
    async suggest(...args) {
      let answer: SuggestAnswer;
      try {
        answer = await engine.suggest(...args);
      } catch (err) {
        const outcome = refused(err);
        if (outcome) outcomes.inc({ outcome });
        throw err;
      }
      const outcome = answered(answer);
      outcomes.inc({ outcome });
      if (outcome !== 'no_task' && answer.best !== undefined) bestScore.observe(answer.best);
      return answer;
    },
    refusal(deadline) {
      const early = engine.refusal(deadline);
      if (early) outcomes.inc({ outcome: 'overloaded' });
      return early;
    },
  };
}
