import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ChangeFollower } from './change-follower.js';

/** Whether a promise has settled by the next turn of the event loop. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await nextTurn();
  return settled;
}

/** A build that ends when the test says so. */
function gatedBuild() {
  let open!: () => void;
  let fail!: (err: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  let builds = 0;
  const follower = new ChangeFollower({
    ready: () => builds > 0,
    build: async () => {
      await gate;
      builds++;
    },
    catchUp: async () => {},
  });
  return { follower, open, fail, builds: () => builds };
}

describe('ChangeFollower.firstBuild', () => {
  it('settles when the first build ends, not before, and stays settled through later builds', async () => {
    const { follower, open, builds } = gatedBuild();
    const building = follower.build();
    expect(await settledYet(follower.firstBuild)).toBe(false);
    open();
    await building;
    expect(await settledYet(follower.firstBuild)).toBe(true);
    await follower.build();
    expect(builds()).toBe(2);
    expect(await settledYet(follower.firstBuild)).toBe(true);
    await follower.close();
  });

  it('settles when the first build fails, with the failure in `error`', async () => {
    const { follower, fail } = gatedBuild();
    const building = follower.build();
    fail(new Error('over budget'));
    await building;
    expect(await settledYet(follower.firstBuild)).toBe(true);
    expect(follower.error).toBe('over budget');
    await follower.close();
  });

  it('settles when the follower closes before any build, so nothing waits on it forever', async () => {
    const { follower } = gatedBuild();
    expect(await settledYet(follower.firstBuild)).toBe(false);
    await follower.close();
    expect(await settledYet(follower.firstBuild)).toBe(true);
  });

  it('starts building only once `startAfter` settles, and not at all when closed first', async () => {
    let settle!: () => void;
    const startAfter = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let builds = 0;
    const steps = {
      ready: () => builds > 0,
      build: async () => {
        builds++;
      },
      catchUp: async () => {},
      startAfter,
    };
    const waiting = new ChangeFollower(steps);
    const building = waiting.build();
    expect(await settledYet(building)).toBe(false);
    expect(builds).toBe(0);
    settle();
    await building;
    expect(builds).toBe(1);
    await waiting.close();

    const closing = new ChangeFollower({ ...steps, startAfter: new Promise<void>(() => {}) });
    const never = closing.build();
    await closing.close();
    await never;
    expect(builds).toBe(1);
    expect(closing.error).toBeUndefined();
  });

  it('runs `beforeFirstBuild` at once beside `startAfter`, builds once both settle, and only the first time', async () => {
    let settle!: () => void;
    const startAfter = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let prepare!: () => void;
    let prepared = 0;
    let builds = 0;
    const follower = new ChangeFollower({
      ready: () => builds > 0,
      build: async () => {
        builds++;
      },
      catchUp: async () => {},
      startAfter,
      beforeFirstBuild: () => {
        prepared++;
        return new Promise<void>((resolve) => {
          prepare = resolve;
        });
      },
    });
    const building = follower.build();
    await nextTurn();
    expect(prepared).toBe(1);
    settle();
    expect(await settledYet(building)).toBe(false);
    prepare();
    await building;
    expect(builds).toBe(1);
    await follower.build();
    expect([prepared, builds]).toEqual([1, 2]);
    await follower.close();
  });
});

describe('ChangeFollower builds and catch-ups', () => {
  it('never runs a build beside a catch-up: each waits for the other, and a sync asked meanwhile runs after', async () => {
    const log: string[] = [];
    let releaseCatchUp!: () => void;
    let releaseBuild!: () => void;
    let built = false;
    const follower = new ChangeFollower({
      ready: () => built,
      build: async () => {
        log.push('build start');
        await new Promise<void>((resolve) => {
          releaseBuild = resolve;
        });
        built = true;
        log.push('build end');
      },
      catchUp: async () => {
        log.push('catch-up start');
        await new Promise<void>((resolve) => {
          releaseCatchUp = resolve;
        });
        log.push('catch-up end');
      },
    });
    const first = follower.build();
    await nextTurn();
    releaseBuild();
    await first;
    // A catch-up runs; a build asked now starts only when it ends.
    const catchingUp = follower.sync();
    await nextTurn();
    const rebuilding = follower.build();
    await nextTurn();
    expect(log.at(-1)).toBe('catch-up start');
    releaseCatchUp();
    await catchingUp;
    await nextTurn();
    expect(log.at(-1)).toBe('build start');
    // A sync asked during the build waits for it, then catches up once.
    const syncing = follower.sync();
    await nextTurn();
    expect(log.at(-1)).toBe('build start');
    releaseBuild();
    await rebuilding;
    await nextTurn();
    expect(log.at(-1)).toBe('catch-up start');
    releaseCatchUp();
    await syncing;
    expect(log).toEqual([
      'build start',
      'build end',
      'catch-up start',
      'catch-up end',
      'build start',
      'build end',
      'catch-up start',
      'catch-up end',
    ]);
    await follower.close();
  });
});
