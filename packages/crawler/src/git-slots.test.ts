import { describe, expect, it } from 'vitest';
import { GitSlots } from './git-slots.js';

describe('GitSlots', () => {
  it('lets `size` holders in at once and the next waiter in, in arrival order, as one leaves', async () => {
    const slots = new GitSlots(2);
    const order: string[] = [];
    const first = await slots.acquire();
    const second = await slots.acquire();
    const third = slots.acquire().then((release) => {
      order.push('third');
      return release;
    });
    const fourth = slots.acquire().then((release) => {
      order.push('fourth');
      return release;
    });
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    first();
    first(); // a second release of the same slot frees nothing more
    await third;
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['third']);
    second();
    (await fourth)();
    (await third)();
    // Every slot is free again: two holders at once without waiting.
    await slots.acquire();
    await slots.acquire();
  });
});
