import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, withSafeErrors } from './logger.js';

/** What drizzle throws for a statement the server refused: the SQL and its parameters in the message. */
function failedQuery(): Error {
  const driver = Object.assign(
    new Error('insert or update on table "crawl_reports" violates foreign key constraint'),
    { code: '23503' },
  );
  return new Error('Failed query: insert into "crawl_reports" values ($1, $2)\nparams: 29,hunter2-secret', {
    cause: driver,
  });
}

describe('the crawler logger', () => {
  it('logs a database error by its driver’s words, never the SQL text and parameters', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'atskills-logger-')), 'log');
    const fd = openSync(file, 'w');
    createLogger('info', fd).warn({ err: failedQuery(), jobId: 'repo-1-a/b' }, 'job attempt failed');
    closeSync(fd);
    const line = JSON.parse(readFileSync(file, 'utf8')) as { err: Record<string, unknown> };
    expect(line.err).toEqual({
      type: 'DatabaseQueryError',
      message: 'insert or update on table "crawl_reports" violates foreign key constraint',
      code: '23503',
    });
    expect(JSON.stringify(line)).not.toMatch(/Failed query|hunter2|insert into/);
  });

  it('does the same for a logger it was handed (the hub’s, a test’s), other errors untouched', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = withSafeErrors(pino(sink));
    logger.error({ err: failedQuery() }, 'could not settle an abandoned job');
    logger.error({ err: new Error('git exited 128') }, 'job attempt failed');
    expect(lines.join('')).not.toMatch(/hunter2|insert into/);
    expect(JSON.parse(lines[1]!).err).toMatchObject({ type: 'Error', message: 'git exited 128' });
  });
});
