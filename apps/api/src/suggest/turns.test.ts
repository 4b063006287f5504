import { describe, expect, it } from 'vitest';
import { Turns } from './turns.js';

/** Holds the thread for `ms` (the CPU-bound work a turn stands for). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

describe('Turns', () => {
  it('gives turns in the order they were asked for, including to callers that asked during a turn', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const late: Promise<void>[] = [];
    const first = turns.take().then(() => {
      order.push('a');
      late.push(turns.take().then(() => order.push('d')) as Promise<void>);
    });
    const second = turns.take().then(() => order.push('b'));
    const third = turns.take().then(() => order.push('c'));
    expect(turns.queued).toBe(3);
    await Promise.all([first, second, third]);
    await Promise.all(late);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(turns.queued).toBe(0);
  });

  it('lets the event loop run what became due between two turns, instead of answering a batch in one pass', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const first = turns.take().then(() => {
      order.push('first turn');
      // A timer that is due before the next turn: the loop's next pass runs it (timers come before
      // immediates), as it reads requests that arrived meanwhile.
      setTimeout(() => order.push('timer'), 0);
      busy(5);
    });
    const second = turns.take().then(() => order.push('second turn'));
    await Promise.all([first, second]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(order).toEqual(['first turn', 'timer', 'second turn']);
  });

  it('keeps its queue compact over many turns', async () => {
    const turns = new Turns();
    let served = 0;
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 100 }, () => turns.take().then(() => served++)));
    }
    expect(served).toBe(500);
    expect(turns.queued).toBe(0);
    expect((turns as unknown as { waiting: unknown[] }).waiting.length).toBeLessThanOrEqual(100);
  });
});
