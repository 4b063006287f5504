import { type Logger, pino } from 'pino';

/** The crawler's logger: JSON lines to stderr (stdout stays free for command output). */
export function createLogger(level: string, destination = 2): Logger {
  return pino({ name: 'crawler', level }, pino.destination({ dest: destination, sync: true }));
}
