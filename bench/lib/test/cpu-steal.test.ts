import { describe, expect, it } from 'vitest';
import { cpuTimes, stolenShare } from '../cpu-steal.js';
import { runCallLoad } from '../load.js';

describe('cpu steal', () => {
  it('reads the stolen and total ticks of /proc/stat, and the stolen share between two readings', () => {
    const before = cpuTimes('cpu  400 0 50 500 10 0 5 35 0 0\ncpu0 200 0 25 250 5 0 2 18 0 0\n');
    const after = cpuTimes('cpu  500 0 60 560 10 0 5 65 0 0\n');
    expect(before).toEqual({ steal: 35, total: 1000 });
    expect(after).toEqual({ steal: 65, total: 1200 });
    expect(stolenShare(before, after)).toBeCloseTo(30 / 200, 12);
  });

  it('says nothing where there is no such line or no second reading', () => {
    expect(cpuTimes('intr 12 0 0\n')).toBeNull();
    expect(cpuTimes('cpu 1 2 3\n')).toBeNull();
    expect(stolenShare(null, { steal: 1, total: 2 })).toBeNull();
    // This machine's own reading, where there is one, has a total and a steal no larger than it.
    const now = cpuTimes();
    if (now) expect(now.steal).toBeLessThanOrEqual(now.total);
  });

  it('comes with every measured load, as a share of the CPU time', async () => {
    const result = await runCallLoad(async (i) => i, { concurrency: 2, total: 200, warmup: 10 });
    expect(result.count).toBe(200);
    if (cpuTimes() === null) expect(result.stolen).toBeNull();
    else {
      expect(typeof result.stolen).toBe('number');
      expect(result.stolen!).toBeGreaterThanOrEqual(0);
      expect(result.stolen!).toBeLessThanOrEqual(1);
    }
  });
});
