import { describe, expect, it } from 'vitest';
import { TimeSlicer } from './time-slice.js';

describe('TimeSlicer', () => {
  it('is due once its slice has run, and a pause lets queued callbacks run first', async () => {
    const slice = new TimeSlicer(0);
    expect(slice.due()).toBe(true);
    const ran: string[] = [];
    setImmediate(() => ran.push('queued'));
    await slice.pause();
    ran.push('after pause');
    expect(ran).toEqual(['queued', 'after pause']);
    expect(slice.pauses).toBe(1);
  });

  it('resumes one paused computation per turn of the event loop, first paused first', async () => {
    // A ticker counts the loop's turns (each of its setImmediate callbacks runs one turn after the last).
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const resumedAt: { who: string; turn: number }[] = [];
    const work = async (who: string) => {
      const slice = new TimeSlicer(0);
      for (let i = 0; i < 3; i++) {
        await slice.pause();
        resumedAt.push({ who, turn });
      }
    };
    await Promise.all([work('index'), work('model')]);
    ticking = false;
    expect(resumedAt.map((r) => r.who)).toEqual(['index', 'model', 'index', 'model', 'index', 'model']);
    const turns = resumedAt.map((r) => r.turn);
    expect(new Set(turns).size).toBe(turns.length);
  });

  it('never pauses with a slice of Infinity (a build that holds the loop to its end)', () => {
    const slice = new TimeSlicer(Number.POSITIVE_INFINITY);
    const until = performance.now() + 5;
    while (performance.now() < until) expect(slice.due()).toBe(false);
  });
});
