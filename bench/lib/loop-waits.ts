/** How often the timer that measures the event loop's waits asks for a turn (ms). */
const PROBE_MS = 5;

/**
 * Runs `work` while a timer records every wait of the event loop (ms between its turns), longest first,
 * the last one up to the end of the work included (a work that never yields shows as one wait).
 */
export async function watchLoop<T>(
  work: () => Promise<T>,
): Promise<{ seconds: number; waits: number[]; result: T }> {
  const waits: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    waits.push(now - last);
    last = now;
  }, PROBE_MS);
  const started = performance.now();
  try {
    const result = await work();
    const ended = performance.now();
    waits.push(ended - last);
    return { seconds: (ended - started) / 1000, waits: waits.sort((a, b) => b - a), result };
  } finally {
    clearInterval(timer);
  }
}
