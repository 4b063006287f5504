#!/usr/bin/env node
// The `crawler` command: boot, parse arguments, hand over to a command; signals are handled per command.
import { Command } from 'commander';
import { crawlCommand, statusCommand, workerCommand } from './cli/commands.js';

const program = new Command('crawler').description(
  'Crawls GitHub repositories holding SKILL.md into the hub index',
);

program
  .command('crawl')
  .description(
    'crawl repositories now, showing progress (works the jobs in this process unless --enqueue-only)',
  )
  .option('--repos <list>', 'comma-separated gh:owner/repo list')
  .option('--repos-file <file>', 'file with one gh:owner/repo per line')
  .option('--discover <source>', 'code-search | org:NAME')
  .option('--force', 'ignore stored heads and revisions: download and parse everything again')
  .option('--enqueue-only', 'only enqueue the run (needs REDIS_URL and running workers)')
  .action(async (options) => {
    process.exitCode = await crawlCommand(options);
  });

program
  .command('worker')
  .description(
    'take crawl jobs from Redis until SIGTERM (finishes or releases the current jobs within a deadline)',
  )
  .option(
    '--shutdown-deadline <ms>',
    'how long running jobs may take to finish on SIGTERM (default: SHUTDOWN_TIMEOUT_MS, 25000)',
  )
  .action(async (options: { shutdownDeadline?: string }) => {
    await workerCommand(
      options.shutdownDeadline === undefined ? {} : { shutdownDeadlineMs: Number(options.shutdownDeadline) },
    );
  });

program
  .command('status')
  .description('queue counts, recent runs and failing repositories')
  .action(async () => {
    await statusCommand();
  });

program
  .command('rebuild')
  .description('re-crawl every known repository, ignoring stored heads')
  .action(async () => {
    process.exitCode = await crawlCommand({ rebuild: true });
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`crawler: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
