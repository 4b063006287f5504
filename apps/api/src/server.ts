import { type RunningHub, startHub } from './runtime/start.js';
import { describeStartupError } from './runtime/startup-errors.js';

// Only this file listens (through runtime/start.ts) and handles signals; buildApp builds the same app for tests.
let hub: RunningHub;
try {
  hub = await startHub({ env: process.env, argv: process.argv.slice(2) });
} catch (err) {
  // One line saying what to do (port in use, database unreachable, bad setting, data folder in use).
  console.error(`error: ${describeStartupError(err, process.env)}`);
  if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') console.error(err);
  process.exit(1);
}

const stop = (signal: string) => {
  // Past the deadline (plus a margin for closing pools) the process ends anyway; a second signal ends it now.
  setTimeout(() => {
    hub.logger.error({ signal }, 'shutdown deadline passed, exiting');
    process.exit(1);
  }, hub.ops.shutdownTimeoutMs + 5_000).unref();
  process.once(signal, () => process.exit(1));
  hub.shutdown(signal).then(
    () => process.exit(0),
    (err) => {
      hub.logger.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.once('SIGTERM', () => stop('SIGTERM'));
process.once('SIGINT', () => stop('SIGINT'));
