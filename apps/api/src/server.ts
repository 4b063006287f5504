import cluster from 'node:cluster';
import { clusterPlan, runClusterPrimary } from './runtime/cluster.js';
import { type RunningHub, startHub } from './runtime/start.js';
import { describeStartupError } from './runtime/startup-errors.js';

// Only this file listens (through runtime/start.ts) and handles signals; buildApp builds the same app for tests.
const fail = (err: unknown): never => {
  // One line saying what to do (port in use, database unreachable, bad setting, data folder in use).
  console.error(`error: ${describeStartupError(err, process.env)}`);
  if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') console.error(err);
  process.exit(1);
};

let plan: ReturnType<typeof clusterPlan> = { workers: 1 };
try {
  plan = clusterPlan(process.env);
} catch (err) {
  fail(err);
}

if (plan.workers > 1 && plan.settings) {
  // API_WORKERS > 1: this process only forks, watches and stops the hubs (runtime/cluster.ts).
  runClusterPrimary(plan.workers, plan.settings);
} else {
  let hub: RunningHub | undefined;
  try {
    hub = await startHub({
      env: process.env,
      argv: process.argv.slice(2),
      ...(plan.settings ? { settings: plan.settings } : {}),
    });
  } catch (err) {
    fail(err);
  }
  const running = hub!;
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    // Past the deadline (plus a margin for closing pools) the process ends anyway; a second signal ends it now.
    setTimeout(() => {
      running.logger.error({ reason }, 'shutdown deadline passed, exiting');
      process.exit(1);
    }, running.ops.shutdownTimeoutMs + 5_000).unref();
    process.once('SIGTERM', () => process.exit(1));
    // (A worker's Ctrl+C came with the primary's SIGTERM: only the primary counts a second one.)
    if (!cluster.isWorker) process.once('SIGINT', () => process.exit(1));
    running.shutdown(reason).then(
      () => process.exit(0),
      (err) => {
        running.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  if (cluster.isWorker) {
    // Ctrl+C reaches every process of the terminal's group: the primary relays it as SIGTERM, once.
    process.on('SIGINT', () => {});
    // A worker whose primary is gone (killed outright) stops as if told to.
    process.once('disconnect', () => stop('primary gone'));
  } else {
    process.once('SIGINT', () => stop('SIGINT'));
  }
}
