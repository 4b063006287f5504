import { describe, expect, it } from 'vitest';
import { RateLimitedError } from './github/rate-limited-error.js';
import { InProcessQueue } from './in-process-queue.js';

describe('InProcessQueue', () => {
  it('drops a job whose id was already added', async () => {
    const seen: string[] = [];
    const queue = new InProcessQueue('t', async (data: string) => void seen.push(data), {
      concurrency: 2,
      attempts: 1,
      backoffMs: 1,
    });
    expect(queue.add('a', 'job-a')).toBe(true);
    expect(queue.add('a again', 'job-a')).toBe(false);
    queue.add('b', 'job-b');
    await queue.onIdle();
    expect(seen.sort()).toEqual(['a', 'b']);
    expect(queue.counts()).toMatchObject({ completed: 2, failed: 0 });
  });

  it('retries a failing job up to its attempts, telling the handler which is final', async () => {
    const calls: { attempt: number; finalAttempt: boolean }[] = [];
    const queue = new InProcessQueue(
      't',
      async (_: null, meta) => {
        calls.push({ attempt: meta.attempt, finalAttempt: meta.finalAttempt });
        throw new Error('boom');
      },
      { concurrency: 1, attempts: 3, backoffMs: 1 },
    );
    queue.add(null, 'x');
    await queue.onIdle();
    expect(calls).toEqual([
      { attempt: 1, finalAttempt: false },
      { attempt: 2, finalAttempt: false },
      { attempt: 3, finalAttempt: true },
    ]);
    expect(queue.counts().failed).toBe(1);
  });

  it('tells onFailed of a job out of attempts, not of one that will be retried', async () => {
    const failed: unknown[] = [];
    const queue = new InProcessQueue(
      't',
      async (data: { n: number }, meta) => {
        if (data.n === 1 || !meta.finalAttempt) throw new Error(`boom ${data.n}`);
      },
      {
        concurrency: 1,
        attempts: 2,
        backoffMs: 1,
        onFailed: (error, data) => failed.push([(error as Error).message, data]),
      },
    );
    queue.add({ n: 1 }, 'one');
    queue.add({ n: 2 }, 'two');
    await queue.onIdle();
    expect(failed).toEqual([['boom 1', { n: 1 }]]);
    expect(queue.counts()).toMatchObject({ completed: 1, failed: 1 });
  });

  it('tells onDropped of the jobs its close leaves unrun: waiting, added after, and retried while closing', async () => {
    const dropped: unknown[] = [];
    let release = () => {};
    const queue = new InProcessQueue(
      't',
      async (data: { n: number }) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        if (data.n === 1) throw new Error('boom');
      },
      { concurrency: 1, attempts: 3, backoffMs: 1, onDropped: (data) => dropped.push(data) },
    );
    queue.add({ n: 1 }, 'one');
    queue.add({ n: 2 }, 'two');
    const closing = queue.close();
    expect(queue.add({ n: 3 }, 'three')).toBe(false);
    release();
    await closing;
    // Job 1 ran, failed with attempts left and is not retried; 2 was waiting; 3 came after the close.
    expect(dropped).toEqual([{ n: 2 }, { n: 3 }, { n: 1 }]);
  });

  it('delays a rate-limited job without using an attempt', async () => {
    let calls = 0;
    const queue = new InProcessQueue(
      't',
      async () => {
        calls++;
        if (calls === 1) throw new RateLimitedError(20);
      },
      { concurrency: 1, attempts: 1, backoffMs: 1 },
    );
    queue.add(null, 'x');
    await queue.onIdle();
    expect(calls).toBe(2);
    expect(queue.counts()).toMatchObject({ completed: 1, failed: 0 });
  });

  it('never runs more jobs at once than its concurrency', async () => {
    let running = 0;
    let peak = 0;
    const queue = new InProcessQueue(
      't',
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setImmediate(r));
        running--;
      },
      { concurrency: 3, attempts: 1, backoffMs: 1 },
    );
    for (let i = 0; i < 10; i++) queue.add(null, `j${i}`);
    await queue.onIdle();
    expect(peak).toBe(3);
  });
});
