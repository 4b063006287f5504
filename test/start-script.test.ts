// `npm start`'s build step (scripts/start.ts): turbo's plan read into packages in dependency order, and the
// first line that says how much there is to build.
import { describe, expect, it } from 'vitest';
import { announce, buildOrder, parsePlan } from '../scripts/start.js';

const plan = JSON.stringify({
  tasks: [
    {
      taskId: '@atskills/api#build',
      package: '@atskills/api',
      cache: { status: 'MISS' },
      dependencies: ['@atskills/db#build', '@atskills/protocol#build'],
    },
    {
      taskId: '@atskills/db#build',
      package: '@atskills/db',
      cache: { status: 'MISS' },
      dependencies: ['@atskills/protocol#build'],
    },
    { taskId: '@atskills/protocol#build', package: '@atskills/protocol', cache: { status: 'HIT' } },
    { taskId: 'atskills#build', package: 'atskills', cache: { status: 'MISS' }, dependencies: [] },
  ],
});

describe('the build step of npm start', () => {
  it('orders packages after their dependencies', () => {
    const order = buildOrder(parsePlan(plan)).map((t) => t.name);
    expect(order).toEqual(['@atskills/protocol', 'atskills', '@atskills/db', '@atskills/api']);
  });

  it('says how many packages it builds, and when there is nothing to build', () => {
    const tasks = parsePlan(plan);
    expect(announce(tasks)).toBe('building 3 of 4 packages...');
    expect(announce(tasks.map((t) => ({ ...t, cached: false })))).toBe(
      'building 4 of 4 packages (the first build takes a few minutes)...',
    );
    expect(announce(tasks.map((t) => ({ ...t, cached: true })))).toBe(
      'all 4 packages are built (turbo cache)',
    );
  });

  it('refuses a dependency cycle instead of hanging', () => {
    const cycle = parsePlan(
      JSON.stringify({
        tasks: [
          { taskId: 'a#build', package: 'a', cache: { status: 'MISS' }, dependencies: ['b#build'] },
          { taskId: 'b#build', package: 'b', cache: { status: 'MISS' }, dependencies: ['a#build'] },
        ],
      }),
    );
    expect(() => buildOrder(cycle)).toThrow('dependency cycle among a, b');
  });
});
