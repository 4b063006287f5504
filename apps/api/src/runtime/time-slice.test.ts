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

  it('never pauses with a slice of Infinity (a build that holds the loop to its end)', () => {
    const slice = new TimeSlicer(Number.POSITIVE_INFINITY);
    const until = performance.now() + 5;
    while (performance.now() < until) expect(slice.due()).toBe(false);
  });
});
