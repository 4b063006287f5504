import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS_VIEWER } from '../services/auth/viewer.js';
import {
  SuggestAbandonedError,
  type SuggestAnswer,
  type SuggestEngine,
  SuggestOverloadedError,
  SuggestUnavailableError,
} from './engine.js';
import { countOutcomes } from './outcomes.js';

/** An engine that answers or throws what each call is handed, in turn. */
function scriptedEngine(script: (SuggestAnswer | Error)[], refusals: (SuggestOverloadedError | null)[] = []) {
  return {
    async suggest() {
      const next = script.shift();
      if (!next) throw new Error('no more answers scripted');
      if (next instanceof Error) throw next;
      return next;
    },
    refusal: () => refusals.shift() ?? null,
    status: () => ({ ready: true }),
  } as unknown as SuggestEngine;
}

/** The series of `registry` as name{labels} -> value. */
async function series(registry: Registry): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values) {
      const labels = Object.entries(v.labels)
        .map(([k, l]) => `${k}="${l}"`)
        .join(',');
      // Histogram values name their series (_bucket, _sum, _count); prom-client's type leaves that out.
      const name = (v as { metricName?: string }).metricName ?? metric.name;
      out.set(`${name}{${labels}}`, v.value);
    }
  }
  return out;
}

const ask = (engine: SuggestEngine) => engine.suggest('a message', ANONYMOUS_VIEWER, 5);

describe('countOutcomes', () => {
  it('counts answers, both kinds of abstention and every refusal, and the best scores of retrieved requests', async () => {
    const registry = new Registry();
    const engine = countOutcomes(
      registry,
      scriptedEngine(
        [
          { results: [], abstained: false, best: 0.72 },
          { results: [], abstained: true, abstention: 'no-task', best: 0 },
          { results: [], abstained: true, abstention: 'no-fit', best: 0.04 },
          new SuggestOverloadedError(3, 40),
          new SuggestAbandonedError(),
          new SuggestUnavailableError('the suggestion model is still building', 30),
          new TypeError('a fault of no known kind'),
        ],
        [new SuggestOverloadedError(9, 400), null],
      ),
    );
    const before = await series(registry);
    // Every outcome is reported from the start, at 0, so a rate over it exists before the first request.
    for (const outcome of ['answered', 'no_task', 'no_fit', 'overloaded', 'abandoned', 'unavailable']) {
      expect(before.get(`atskills_suggestions_total{outcome="${outcome}"}`), outcome).toBe(0);
    }
    await ask(engine);
    await ask(engine);
    await ask(engine);
    await expect(ask(engine)).rejects.toBeInstanceOf(SuggestOverloadedError);
    await expect(ask(engine)).rejects.toBeInstanceOf(SuggestAbandonedError);
    await expect(ask(engine)).rejects.toBeInstanceOf(SuggestUnavailableError);
    await expect(ask(engine)).rejects.toBeInstanceOf(TypeError);
    // Refused before its body was read (the route asks first), and a caller let through.
    expect(engine.refusal(100)).toBeInstanceOf(SuggestOverloadedError);
    expect(engine.refusal(100)).toBeNull();

    const after = await series(registry);
    const count = (outcome: string) => after.get(`atskills_suggestions_total{outcome="${outcome}"}`);
    expect(count('answered')).toBe(1);
    expect(count('no_task')).toBe(1);
    expect(count('no_fit')).toBe(1);
    expect(count('overloaded')).toBe(2);
    expect(count('abandoned')).toBe(1);
    expect(count('unavailable')).toBe(1);
    // The answered request and the one no skill fitted; a message that asked for nothing was not retrieved for.
    expect(after.get('atskills_suggest_best_score_count{}')).toBe(2);
    expect(after.get('atskills_suggest_best_score_sum{}')).toBeCloseTo(0.76);
    expect(after.get('atskills_suggest_best_score_bucket{le="0.05"}')).toBe(1);
    expect(after.get('atskills_suggest_best_score_bucket{le="0.8"}')).toBe(2);
  });

  it('passes the rest of the engine through', () => {
    const engine = countOutcomes(new Registry(), scriptedEngine([]));
    expect(engine.status()).toEqual({ ready: true });
  });
});
