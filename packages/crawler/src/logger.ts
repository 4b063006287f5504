import { loggableError } from '@atskills/db';
import { type Logger, pino } from 'pino';

/**
 * How every crawler log line shows an error: a failed statement by its driver's words only (drizzle's
 * message holds the SQL text and its parameters, which docs/operations.md promises never to log).
 */
const errorSerializers = {
  err: (err: unknown) => {
    const safe = loggableError(err);
    return safe === err ? pino.stdSerializers.err(err as Error) : safe;
  },
};

/** The crawler's logger: JSON lines to stderr (stdout stays free for command output). */
export function createLogger(level: string, destination = 2): Logger {
  return pino(
    { name: 'crawler', level, serializers: errorSerializers },
    pino.destination({ dest: destination, sync: true }),
  );
}

/** `logger` with the crawler's error serializer, whoever made it (the hub's logger, a test's). */
export function withSafeErrors(logger: Logger): Logger {
  return logger.child({}, { serializers: errorSerializers });
}
