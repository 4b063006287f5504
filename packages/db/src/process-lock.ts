import { randomInt } from 'node:crypto';
import pg from 'pg';

/**
 * The advisory-lock namespace (the first of the two int4 keys) of process locks: "atsr" in ASCII, so the
 * locks are told apart from any other application's on the same server.
 */
const NAMESPACE = 0x61747372;
/** How long to wait before taking the lock again after its connection was lost. */
const RECONNECT_MS = 5_000;

/**
 * A lock this process holds for its whole life on a connection of its own (a Postgres session advisory
 * lock): the server releases it when the process dies, however it dies, so another process can tell
 * whether the holder of a key is still alive. Runs of the in-process queue carry their process's key
 * (`crawl_runs.owner_lock`): a run whose owner is gone will never be completed by anyone.
 */
export interface ProcessLock {
  /** This process's key. */
  readonly key: number;
  /** Whether the process holding `key` is alive (this one is). Throws when the server cannot be asked. */
  isAlive(key: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Takes a process lock with a fresh random key on a dedicated connection to `url`. */
export async function holdProcessLock(options: {
  url: string;
  applicationName?: string;
  onError?: (err: unknown) => void;
}): Promise<ProcessLock> {
  const key = randomInt(1, 2 ** 31 - 1);
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<pg.Client> => {
    const next = new pg.Client({
      connectionString: options.url,
      application_name: `${options.applicationName ?? 'atskills'} process lock`,
    });
    // A lost connection releases the lock: take it again as soon as the server answers, so that other
    // processes see this one alive again (runs they ended meanwhile stay ended).
    next.on('error', (err) => {
      options.onError?.(err);
      if (client === next) client = null;
      void next.end().catch(() => {});
      scheduleReconnect();
    });
    await next.connect();
    await next.query('select pg_advisory_lock($1, $2)', [NAMESPACE, key]);
    return next;
  };
  const scheduleReconnect = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect()
        .then((c) => {
          if (closed) void c.end().catch(() => {});
          else client = c;
        })
        .catch((err) => {
          options.onError?.(err);
          scheduleReconnect();
        });
    }, RECONNECT_MS);
    retry.unref();
  };

  client = await connect();
  return {
    key,
    async isAlive(other) {
      if (other === key) return true;
      if (!client) throw new Error('the process lock has no connection to ask through');
      const got = await client.query<{ free: boolean }>('select pg_try_advisory_lock($1, $2) as free', [
        NAMESPACE,
        other,
      ]);
      if (!got.rows[0]!.free) return true;
      await client.query('select pg_advisory_unlock($1, $2)', [NAMESPACE, other]);
      return false;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
