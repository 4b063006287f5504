/**
 * Rate-limit counters: fixed windows per caller, kept where every process answering for the hub sees them
 * (Redis when the deployment has one; else this process, or the primary of an `API_WORKERS` cluster).
 */

/** A caller's count in the current window and the milliseconds left of it. */
export interface WindowCount {
  current: number;
  ttl: number;
}

/** Where a hub keeps its rate-limit counters. */
export interface WindowCounter {
  /** Adds `units` to `key`'s count in its current window (opened now when there is none). */
  add(key: string, units: number, timeWindow: number): Promise<WindowCount>;
  /** `key`'s count in its current window (0 and no time left when none is open). */
  read(key: string, timeWindow: number): Promise<WindowCount>;
}

/** Windows past which the map is swept for ended ones (callers are few in a window; addresses are many). */
const SWEEP_ABOVE = 10_000;

/** Fixed windows in this process's memory: a single hub's counters, and a cluster primary's for its workers. */
export class MemoryWindows implements WindowCounter {
  private readonly windows = new Map<string, { current: number; startedAt: number }>();

  /** `add` without the promise (the cluster primary answers its workers with it). */
  addNow(key: string, units: number, timeWindow: number, now = Date.now()): WindowCount {
    if (this.windows.size > SWEEP_ABOVE) {
      for (const [k, w] of this.windows) if (now - w.startedAt >= timeWindow) this.windows.delete(k);
    }
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= timeWindow) {
      window = { current: 0, startedAt: now };
      this.windows.set(key, window);
    }
    window.current += units;
    return { current: window.current, ttl: window.startedAt + timeWindow - now };
  }

  /** `read` without the promise. */
  readNow(key: string, timeWindow: number, now = Date.now()): WindowCount {
    const window = this.windows.get(key);
    if (!window || now - window.startedAt >= timeWindow) return { current: 0, ttl: 0 };
    return { current: window.current, ttl: window.startedAt + timeWindow - now };
  }

  async add(key: string, units: number, timeWindow: number): Promise<WindowCount> {
    return this.addNow(key, units, timeWindow);
  }

  async read(key: string, timeWindow: number): Promise<WindowCount> {
    return this.readNow(key, timeWindow);
  }
}
