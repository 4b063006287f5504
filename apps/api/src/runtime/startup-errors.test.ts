import { createServer } from 'node:net';
import { connectPostgres, EmbeddedDatabaseBusy } from '@atskills/db';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { describeStartupError } from './startup-errors.js';

/** The error a real second listen on a taken port raises. */
async function portInUse(): Promise<{ err: unknown; port: number }> {
  const first = createServer();
  await new Promise<void>((resolve) => first.listen(0, '127.0.0.1', resolve));
  const port = (first.address() as { port: number }).port;
  const second = createServer();
  const err = await new Promise((resolve) => {
    second.once('error', resolve);
    second.listen(port, '127.0.0.1');
  });
  await new Promise((resolve) => first.close(resolve));
  return { err, port };
}

describe('describeStartupError', () => {
  it('says a port is in use and what to set, in one line', async () => {
    const { err, port } = await portInUse();
    const line = describeStartupError(err, { PORT: String(port) });
    expect(line).toBe(
      `port ${port} on 127.0.0.1 is already in use (another hub?); stop that process or set PORT to a free port.`,
    );
  });

  it('names an unreachable database without its password', async () => {
    const url = 'postgres://hub:s3cret@127.0.0.1:1/hub';
    const db = connectPostgres({ url, max: 1 });
    const err = await db.ping().then(
      () => undefined,
      (e: unknown) => e,
    );
    await db.close();
    const line = describeStartupError(err, { DATABASE_URL: url });
    expect(line).toMatch(
      /^cannot reach the database at postgres:\/\/hub:\*+@127\.0\.0\.1:1\/hub \(.*\); check that it runs/,
    );
    expect(line).not.toContain('s3cret');
    expect(line).not.toContain('\n');
  });

  it('passes a bad setting and a held data folder through as their own one-line messages', () => {
    const bad = (() => {
      try {
        loadConfig({ PORT: 'eighty' });
      } catch (err) {
        return err;
      }
    })();
    expect(describeStartupError(bad)).toMatch(/^Invalid configuration: PORT: /);
    const busy = new EmbeddedDatabaseBusy('/srv/hub/.data/db', {
      pid: 42,
      kind: 'hub',
      startedAt: '2026-01-01T00:00:00Z',
      url: 'http://127.0.0.1:8080',
    });
    expect(describeStartupError(busy)).toBe(
      'The embedded database in /srv/hub/.data/db is in use by a running hub (pid 42, http://127.0.0.1:8080); stop it first, or set ATSKILLS_DATA_DIR to another folder.',
    );
  });

  it('never prints a stack trace for anything else', () => {
    const line = describeStartupError(new Error('something\nbroke\n    at frame (x.js:1:1)'));
    expect(line.split('\n')).toHaveLength(1);
  });
});

describe('describeStartupError of a HOST that does not resolve', () => {
  it('names HOST, not the embedded database', async () => {
    const s = createServer();
    const err = await new Promise((resolve) => {
      s.once('error', resolve);
      s.listen(0, 'not.a.host.invalid');
    });
    const line = describeStartupError(err, { HOST: 'not.a.host.invalid' });
    expect(line).toMatch(/^HOST not\.a\.host\.invalid does not resolve \(E[A-Z]+\); set HOST/);
    expect(line).not.toContain('database');
  });

  it('does not blame the embedded database for a lookup it never made', () => {
    const err = Object.assign(new Error('getaddrinfo ENOTFOUND elsewhere.invalid'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname: 'elsewhere.invalid',
    });
    expect(describeStartupError(err, {})).not.toContain('database');
    // With a database server, the same error is that server's.
    expect(describeStartupError(err, { DATABASE_URL: 'postgres://db.invalid/hub' })).toMatch(
      /^cannot reach the database at postgres:\/\/db\.invalid\/hub/,
    );
  });
});
