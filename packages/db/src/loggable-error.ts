// What logs and reports say about an error: drizzle wraps a driver error in "Failed query: <SQL> params:
// <values>", and the parameters are user input (sometimes secrets), so a database error is told by its
// driver's words only (docs/operations.md). Shared by the hub's logger and the crawler's.

/** Whether `err` is drizzle's wrapper of a failed statement (its message holds the SQL and parameters). */
function isFailedQuery(err: unknown): err is { message: string; cause?: unknown } {
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && message.startsWith('Failed query');
}

/**
 * What to log for `err`: a failed statement as `{ type, message, code }` from its driver error (SQLSTATE and
 * the driver's message), never the SQL text and parameters; any other error as it is.
 */
export function loggableError(err: unknown): unknown {
  if (!isFailedQuery(err)) return err;
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  return {
    type: 'DatabaseQueryError',
    message: typeof cause?.message === 'string' ? cause.message : 'query failed',
    ...(typeof cause?.code === 'string' ? { code: cause.code } : {}),
  };
}

/** The message of `err` fit for a log line or a stored report: a failed statement's driver message only. */
export function loggableMessage(err: unknown): string {
  const safe = loggableError(err) as { message?: unknown } | null | undefined;
  return typeof safe?.message === 'string' ? safe.message : String(err);
}
