/**
 * A transaction gives its pooled connection back whatever happens to it. drizzle-orm 0.45's node-postgres
 * `transaction()` sends BEGIN before the try/finally that releases the client (a BEGIN that fails leaks the
 * pool slot for the life of the process: drizzle-team/drizzle-orm#6241, #6114, open), and releases it as
 * healthy after any failure, so a connection whose query timed out client-side went back to the pool with
 * that query still running on it. The connection here passes through a TCP proxy the test cuts.
 */
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectThroughProxy,
  createTestDatabase,
  queryRows,
  type TestDatabase,
} from '../../../test/support/database.js';
import { startTcpProxy, type TcpProxy, upstreamOf } from '../../../test/support/tcp-proxy.js';
import type { DatabaseHandle } from '../src/client.js';

let database: TestDatabase;
let proxy: TcpProxy;
let handle: DatabaseHandle;
let pool: pg.Pool;

/** The server process behind the connection a plain query gets from the pool. */
const backendPid = async (): Promise<number> => {
  const [row] = await queryRows<{ pid: number }>(handle.db, sql`select pg_backend_pid() as pid`);
  return Number(row?.pid);
};

beforeAll(async () => {
  database = await createTestDatabase('transaction_release');
  proxy = await startTcpProxy(upstreamOf(database.url));
  // One connection: a leaked client leaves the pool with none. The client-side query timeout is what
  // bounds a query whose server went silent.
  handle = connectThroughProxy(proxy, database.url, {
    max: 1,
    statementTimeoutMs: 10_000,
    queryTimeoutMs: 500,
  });
  pool = (handle.db as unknown as { $client: pg.Pool }).$client;
});

afterAll(async () => {
  await handle?.close();
  await proxy?.close();
  await database?.drop();
});

describe('transactions on a pool', () => {
  it('commit, and give back the same healthy connection', async () => {
    const before = await backendPid();
    const value = await handle.db.transaction(async (tx) => {
      const result = (await tx.execute(sql`select 41 + 1 as answer`)) as { rows: { answer: number }[] };
      return Number(result.rows[0]?.answer);
    });
    expect(value).toBe(42);
    expect(await backendPid()).toBe(before);
    expect(pool.totalCount).toBe(1);
  });

  it('roll back on an error of their own and keep the connection, outside any transaction', async () => {
    const before = await backendPid();
    await handle.db.execute(sql`create table if not exists tx_probe (n int)`);
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (1)`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await queryRows(handle.db, sql`select count(*)::int as n from tx_probe`)).toEqual([{ n: 0 }]);
    // The same server process, outside any transaction: a statement of its own gets no transaction id.
    expect(await backendPid()).toBe(before);
    const inTransaction = sql`select txid_current_if_assigned() is not null as open`;
    expect(await queryRows(handle.db, inTransaction)).toEqual([{ open: false }]);
  });

  it('nest as savepoints', async () => {
    await handle.db.execute(sql`truncate tx_probe`);
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into tx_probe values (1)`);
      await expect(
        tx.transaction(async (inner) => {
          await inner.execute(sql`insert into tx_probe values (2)`);
          throw new Error('inner only');
        }),
      ).rejects.toThrow('inner only');
    });
    expect(await queryRows(handle.db, sql`select array_agg(n order by n) as ns from tx_probe`)).toEqual([
      { ns: [1] },
    ]);
  });

  it('give up a connection whose BEGIN never answers, so the pool is not left without one', async () => {
    await backendPid(); // one idle connection in the pool, which the cut leaves silent
    await proxy.cut('blackhole');
    await expect(handle.db.transaction(async (tx) => tx.execute(sql`select 1`))).rejects.toThrow();
    await proxy.restore();
    // The leaked client held the pool's only slot: every query after waited for a connection and failed.
    expect(await backendPid()).toBeGreaterThan(0);
    expect(pool.totalCount).toBe(1);
    expect(pool.idleCount).toBe(1);
  });

  it('give up a connection whose query timed out client-side instead of handing it on still busy', async () => {
    const before = await backendPid();
    // The server would let it sleep 6 s; this side stops waiting after 0.5 s.
    await expect(handle.db.transaction(async (tx) => tx.execute(sql`select pg_sleep(6)`))).rejects.toThrow();
    // Before, the connection went back to the pool as healthy with the sleep still running on it, and the
    // next query waited behind it (or timed out).
    const started = performance.now();
    expect(await backendPid()).not.toBe(before);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(pool.totalCount).toBe(1);
  });

  it('end the pool promptly after failures of every kind', async () => {
    const ended = await Promise.race([
      handle.close().then(() => 'ended'),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 5_000)),
    ]);
    expect(ended).toBe('ended');
    // A fresh pool for afterAll to close.
    handle = connectThroughProxy(proxy, database.url, { max: 1 });
  });
});
