// A module-resolution hook that records which modules a process loads, so a test can prove a start-up path
// never touches a heavy dependency without timing anything. Load it with
// `--import <this file's URL>` and ATSKILLS_MODULE_LOG=<file>: every URL the process resolves is appended to
// that file, one per line. Plain JavaScript because hooks run in their own thread, outside tsx's transform.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const log = process.env.ATSKILLS_MODULE_LOG;
// The hooks thread imports this file again to find `resolve`: only the main thread registers it.
if (isMainThread && log) register(import.meta.url);

/** Resolves as Node would and appends the resolved URL to the log. */
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (log) appendFileSync(log, `${result.url}\n`);
  return result;
}
