import pg from 'pg';

/** The channel migration 0006 notifies after every statement that writes `skills`. */
export const INDEX_CHANGE_CHANNEL = 'atskills_index';

/**
 * What a watcher hears: `change` (the index changed: drop what was read from it), `lost` (the feed is down,
 * changes may go unheard: stop trusting anything read before), `live` (listening again; changes made
 * while it was down were not heard, so treat this as a change too) and `alive` (a heartbeat came back:
 * nothing was missed up to now).
 */
export type IndexChangeEvent = 'change' | 'lost' | 'live' | 'alive';

/** A running watch; `close` stops listening and releases its connection. */
export interface IndexWatch {
  /**
   * How long after the last event the feed may be trusted (ms), or null when it cannot silently break
   * (in-process). A server that stops answering sends no error, so silence past this means "lost".
   */
  readonly leaseMs: number | null;
  close(): Promise<void>;
}

export interface PostgresWatchOptions {
  url: string;
  applicationName: string;
  /** How often the listening connection is checked with a query (ms); the lease is three of these. */
  heartbeatMs?: number;
  /** First reconnect delay (ms), doubled up to 30 s while the server stays away. */
  retryMs?: number;
}

/**
 * Listens for index changes on a dedicated connection of its own (LISTEN cannot share a pooled one).
 * A connection that errors, ends or misses a heartbeat reports `lost`, then is replaced with backoff.
 */
export function watchPostgresIndexChanges(
  options: PostgresWatchOptions,
  onEvent: (event: IndexChangeEvent) => void,
): IndexWatch {
  const heartbeatMs = options.heartbeatMs ?? 1_000;
  const firstRetryMs = options.retryMs ?? 500;
  let retryMs = firstRetryMs;
  let closed = false;
  let current: pg.Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let reconnect: NodeJS.Timeout | undefined;

  const drop = (client: pg.Client) => {
    if (current !== client) return; // already replaced or closed
    current = undefined;
    clearInterval(heartbeat);
    client.end().catch(() => {});
    if (closed) return;
    onEvent('lost');
    reconnect = setTimeout(connect, retryMs);
    reconnect.unref();
    retryMs = Math.min(retryMs * 2, 30_000);
  };

  const connect = async () => {
    if (closed) return;
    const client = new pg.Client({
      connectionString: options.url,
      application_name: `${options.applicationName}-listen`,
      connectionTimeoutMillis: 5_000,
      query_timeout: Math.max(500, heartbeatMs),
      keepAlive: true,
    });
    current = client;
    client.on('notification', (message) => {
      if (message.channel === INDEX_CHANGE_CHANNEL) onEvent('change');
    });
    client.on('error', () => drop(client));
    client.on('end', () => drop(client));
    try {
      await client.connect();
      await client.query(`listen ${INDEX_CHANGE_CHANNEL}`);
    } catch {
      drop(client);
      return;
    }
    if (current !== client) return;
    retryMs = firstRetryMs;
    heartbeat = setInterval(() => {
      client.query('select 1').then(
        () => current === client && onEvent('alive'),
        () => drop(client),
      );
    }, heartbeatMs);
    heartbeat.unref();
    onEvent('live');
  };

  void connect();
  return {
    leaseMs: heartbeatMs * 3,
    async close() {
      closed = true;
      clearTimeout(reconnect);
      clearInterval(heartbeat);
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}

/** The part of a PGlite instance a watch needs (in-process: notifications cannot be lost). */
export interface ListeningClient {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** Listens for index changes on an embedded PGlite database. */
export async function watchEmbeddedIndexChanges(
  client: ListeningClient,
  onEvent: (event: IndexChangeEvent) => void,
): Promise<IndexWatch> {
  const unlisten = await client.listen(INDEX_CHANGE_CHANNEL, () => onEvent('change'));
  onEvent('live');
  return { leaseMs: null, close: () => unlisten() };
}
