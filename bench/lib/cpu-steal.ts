/**
 * CPU time the hypervisor took from this virtual machine's CPUs: the `steal` column of Linux's /proc/stat.
 * On the shared machines these benchmarks run on, a load round whose p99 is several times the others'
 * coincides with steal: on 2026-12-06, four rounds of /v1/suggest at c=16 gave p99 117, 118, 382 and 115 ms,
 * and only the third saw steal (5-27 hundredths of a core a second, none in the others). Every measured load
 * (load.ts) reports it beside its latencies, so a reader can tell the machine from the code.
 */
import { readFileSync } from 'node:fs';

/** Cumulative CPU time of every CPU, in clock ticks: what was stolen, and the total. */
export interface CpuTimes {
  steal: number;
  total: number;
}

/** The machine's CPU times now, from the first line of /proc/stat; null where there is none (not Linux). */
export function cpuTimes(statText?: string): CpuTimes | null {
  let text = statText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/stat', 'utf8');
    } catch {
      return null;
    }
  }
  const line = text.split('\n', 1)[0] ?? '';
  const fields = line.split(/\s+/);
  if (fields[0] !== 'cpu') return null;
  // user nice system idle iowait irq softirq steal (guest time is already counted in user and nice).
  const ticks = fields.slice(1, 9).map(Number);
  if (ticks.length < 8 || ticks.some((t) => !Number.isFinite(t))) return null;
  return { steal: ticks[7]!, total: ticks.reduce((sum, t) => sum + t, 0) };
}

/** The share of all CPU time between two readings that was stolen (0-1), or null without both. */
export function stolenShare(before: CpuTimes | null, after: CpuTimes | null): number | null {
  if (!before || !after) return null;
  const total = after.total - before.total;
  return total > 0 ? (after.steal - before.steal) / total : 0;
}
