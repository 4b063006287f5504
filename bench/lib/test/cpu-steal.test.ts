import { describe, expect, it } from 'vitest';
import { cpuTimes, stolenShare } from '../cpu-steal.js';

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
});
