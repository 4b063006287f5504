import { describe, expect, it } from 'vitest';
import { MemoryWindows } from './rate-windows.js';

describe('MemoryWindows', () => {
  it('counts units per key in fixed windows that end `timeWindow` after their first unit', () => {
    const windows = new MemoryWindows();
    expect(windows.addNow('ip:a', 1, 60_000, 1_000)).toEqual({ current: 1, ttl: 60_000 });
    expect(windows.addNow('ip:a', 127, 60_000, 31_000)).toEqual({ current: 128, ttl: 30_000 });
    expect(windows.addNow('ip:b', 1, 60_000, 31_000)).toEqual({ current: 1, ttl: 60_000 });
    expect(windows.readNow('ip:a', 60_000, 60_999)).toEqual({ current: 128, ttl: 1 });
    // The window ended: a read sees nothing open, the next unit opens a new one.
    expect(windows.readNow('ip:a', 60_000, 61_000)).toEqual({ current: 0, ttl: 0 });
    expect(windows.addNow('ip:a', 1, 60_000, 61_000)).toEqual({ current: 1, ttl: 60_000 });
  });

  it('forgets ended windows once it holds many, keeping the open ones', async () => {
    const windows = new MemoryWindows();
    for (let i = 0; i <= 10_000; i++) windows.addNow(`ip:${i}`, 1, 1_000, 0);
    windows.addNow('ip:late', 3, 1_000, 500);
    // Past the first windows' end, the next add sweeps them; the late caller's window is still open.
    windows.addNow('ip:new', 1, 1_000, 1_200);
    expect(windows.readNow('ip:late', 1_000, 1_200)).toEqual({ current: 3, ttl: 300 });
    expect((windows as unknown as { windows: Map<string, unknown> }).windows.size).toBe(2);
    expect(await windows.add('ip:late', 1, 1_000)).toMatchObject({ current: 1 });
  });
});
