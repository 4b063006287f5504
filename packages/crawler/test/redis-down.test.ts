// A crawler whose Redis is not there: its connections retry for as long as it is away, and the log says
// so once, naming REDIS_URL without its password, instead of a stack per reconnect attempt of each of them.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { unusedPort } from '../../../test/support/ports.js';
import { settingsWith } from '../src/config.js';
import { createCrawler } from '../src/crawler.js';

describe('a crawler whose Redis does not answer', () => {
  it('logs one line naming REDIS_URL, no stacks', { timeout: 30_000 }, async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const port = await unusedPort();
    const crawler = createCrawler({
      // No job runs: nothing reaches the database.
      db: {} as never,
      settings: settingsWith({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }),
      redis: `redis://:redis-pw@127.0.0.1:${port}`,
      logger: pino(sink),
      work: true,
    });
    // Several connections (three queues, three workers), each retrying many times a second.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await crawler.close({ deadlineMs: 500 });
    const logged = lines.map((line) => JSON.parse(line) as { msg: string });
    expect(logged.map((l) => l.msg)).toEqual([
      `cannot reach Redis at REDIS_URL redis://:***@127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}); retrying until it answers`,
    ]);
    expect(lines.join('')).not.toMatch(/redis-pw|"stack"/);
  });
});
