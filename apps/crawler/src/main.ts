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
  // `npm run crawl -- status --repo owner/name` (the npm script runs `crawl`): the status command.
  .argument('[status]', '`status`: show the status instead of crawling (with --repo, one repository)')
  .option('--repo <owner/name>', "with `status`: one repository's index status, skills and problems")
  .action(async (what: string | undefined, options) => {
    if (what !== undefined && what !== 'status') {
      program.error(`crawl takes no argument but "status" (got "${what}")`);
    }
    process.exitCode =
      what === 'status' ? await statusCommand({ repo: options.repo }) : await crawlCommand(options);
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
  .description(
    "queue counts, recent runs and failing repositories; with --repo, one repository's status and problems",
  )
  .option('--repo <owner/name>', 'one repository: index status, listed skills and every problem found')
  .action(async (options) => {
    process.exitCode = await statusCommand({ repo: options.repo });
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
  // One line saying what to do; a database error by its driver's words, never the SQL an ORM wraps it in.
  // Without DATABASE_URL this process opens no database (the running hub does the work), so an error is
  // never the database's: a hub that stopped says so itself.
  const { describeDatabaseFailure, rootMessage } = await import('@atskills/db');
  const databaseUrl = process.env.DATABASE_URL;
  const said = (databaseUrl ? describeDatabaseFailure(error, databaseUrl) : undefined) ?? rootMessage(error);
  process.stderr.write(`crawler: ${said}\n`);
  process.exitCode = 2;
}
