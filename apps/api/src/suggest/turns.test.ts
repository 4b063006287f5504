import { describe, expect, it } from 'vitest';
import { ConnectionIntake, INTAKE_PASSES, TurnRefusedError, Turns } from './turns.js';

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

  /**
   * Turns on a clock moved by hand: `work(ms)` stands for a turn's work taking exactly `ms`, however busy
   * the machine is (a spinning turn on a loaded machine takes longer than asked, and the estimate with it).
   */
  function handClock(): { turns: Turns; now: () => number; work: (ms: number) => void } {
    let clock = 0;
    const now = () => clock;
    return {
      turns: new Turns(undefined, now),
      now,
      work: (ms) => {
        clock += ms;
      },
    };
  }

  /** Gives `count` turns back to back, each taking `ms`: the turns learn how long one takes. */
  async function warm(turns: Turns, work: (ms: number) => void, count: number, ms: number): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => turns.take().then(() => work(ms))));
  }

  it('refuses at once a caller whose deadline comes before the turns queued ahead of it', async () => {
    const { turns, now, work } = handClock();
    await warm(turns, work, 4, 5);
    const ahead = Array.from({ length: 10 }, () => turns.take().then(() => work(5)));
    // Ten turns of 5 ms ahead and its own: 55 ms of work, and it waits 20.
    const refused = await turns.take({ deadline: now() + 20 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TurnRefusedError);
    expect(refused).toMatchObject({ reason: 'late', ahead: 10, expectedWaitMs: 55 });
    // What a caller would hear, asked before it queues (the route asks before reading a body).
    expect(turns.refusal(now() + 20)).toMatchObject({ reason: 'late', ahead: 10 });
    expect(turns.refusal(now() + 55)).toBeUndefined();
    // One that waits long enough is queued behind them, and served.
    const patient = turns.take({ deadline: now() + 10_000 });
    expect(turns.queued).toBe(11);
    await Promise.all([...ahead, patient]);
    expect(turns.queued).toBe(0);
  });

  it('learns what a turn takes from turns given one at a time, and forgets a slow first one', async () => {
    const { turns, work } = handClock();
    await turns.take().then(() => work(100));
    await new Promise((resolve) => setImmediate(resolve));
    expect(turns.turnMs).toBe(100);
    // Never queued: each turn is measured all the same (a cold first turn must not stay the estimate).
    for (let i = 0; i < 40; i++) await turns.take().then(() => work(3));
    await new Promise((resolve) => setImmediate(resolve));
    expect(turns.turnMs).toBeCloseTo(100 * 0.9 ** 40 + 3 * (1 - 0.9 ** 40), 9);
    expect(turns.turnMs).toBeLessThan(5);
  });

  it('admits a caller with any deadline when nothing waits', async () => {
    const { turns, now, work } = handClock();
    // A turn takes 60 ms: a caller that waits 50 would be refused behind even one.
    await warm(turns, work, 3, 60);
    expect(turns.turnMs).toBe(60);
    await expect(turns.take({ deadline: now() + 50 })).resolves.toBeUndefined();
  });

  it('refuses at its turn a caller admitted on an estimate that proved short', async () => {
    const { turns, now, work } = handClock();
    // No turn measured yet: the estimate is 0, so it is admitted behind a turn that takes 30 ms.
    const first = turns.take().then(() => work(30));
    const late = turns.take({ deadline: now() + 10 }).catch((err: unknown) => err);
    await first;
    expect(await late).toMatchObject({ reason: 'late', expectedWaitMs: 0 });
  });

  it('gives up the place of a caller that left, at once, and serves the others in order', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const left = new AbortController();
    const a = turns.take().then(() => order.push('a'));
    const gone = turns.take({ callerLeft: left.signal }).catch((err: unknown) => err);
    const c = turns.take({ callerLeft: new AbortController().signal }).then(() => order.push('c'));
    left.abort();
    expect(turns.queued).toBe(2);
    expect(await gone).toMatchObject({ reason: 'left' });
    await Promise.all([a, c]);
    expect(order).toEqual(['a', 'c']);
    // A caller that already left is refused without queueing.
    await expect(turns.take({ callerLeft: left.signal })).rejects.toMatchObject({ reason: 'left' });
    expect(turns.queued).toBe(0);
  });

  /**
   * Counts passes of the event loop until `turn` settles, accepting a connection (as the server's
   * 'connection' event would) in each of the first `accepting` passes.
   */
  async function passesUntil(
    intake: ConnectionIntake,
    accepting: number,
    turn: Promise<void>,
  ): Promise<number> {
    let passes = 0;
    let given = false;
    const pass = () => {
      passes++;
      if (passes <= accepting) intake.accepted++;
      if (!given) setImmediate(pass);
    };
    setImmediate(pass);
    await turn;
    given = true;
    return passes;
  }

  it('lets connections waiting to be accepted in before a turn: one pass of the loop for each', async () => {
    const intake = new ConnectionIntake();
    const turns = new Turns(intake);
    intake.accepted++;
    const passes = await passesUntil(intake, 10, turns.take());
    // Ten more connections came, one a pass: the turn waited for them, then for one pass without any.
    expect(passes).toBeGreaterThanOrEqual(10);
    expect(passes).toBeLessThanOrEqual(13);
    // Without connections the turn comes in the next pass.
    expect(await passesUntil(intake, 0, turns.take())).toBeLessThanOrEqual(2);
  });

  it('gives the turn after INTAKE_PASSES passes however many connections keep coming', async () => {
    const intake = new ConnectionIntake();
    const turns = new Turns(intake);
    intake.accepted++;
    const passes = await passesUntil(intake, Number.POSITIVE_INFINITY, turns.take());
    expect(passes).toBeGreaterThanOrEqual(INTAKE_PASSES - 1);
    expect(passes).toBeLessThanOrEqual(INTAKE_PASSES + 2);
  });

  it('counts the connections a server accepts', async () => {
    const { createServer, request } = await import('node:http');
    const intake = new ConnectionIntake();
    const server = createServer((_req, res) => res.end('ok'));
    intake.watch(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const get = () =>
      new Promise<void>((resolve, reject) =>
        request({ host: '127.0.0.1', port, agent: false }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end(),
      );
    await Promise.all([get(), get(), get()]);
    await new Promise((resolve) => server.close(resolve));
    expect(intake.accepted).toBe(3);
  });
});
