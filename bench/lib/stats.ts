/** Percentile (0-100) of a list of numbers by linear interpolation; NaN for an empty list. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** The median of a list. */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Summary of latencies in milliseconds. */
export function latencySummary(ms: number[]) {
  return {
    count: ms.length,
    p50: round(percentile(ms, 50)),
    p95: round(percentile(ms, 95)),
    p99: round(percentile(ms, 99)),
    max: round(Math.max(...ms)),
  };
}

/** Rounds to 3 significant decimals for reports. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * CPU milliseconds of this process (all its threads: the collector's too): the machines benchmarks run on
 * are shared, and wall time would count the time other processes held the cores.
 */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
