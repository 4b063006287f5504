// Runs the CLI in-process for the tests beside its code: a fresh home (config, cache) per run, stdin fed in
// chunks as a pipe delivers it, and what it printed captured.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './index.js';

/** What one run printed and returned. */
export interface CapturedRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** stdin as a pipe delivers it: the chunks one after the other. */
export async function* pipedStdin(...chunks: (Buffer | string)[]): AsyncGenerator<Buffer | string> {
  yield* chunks;
}

/**
 * Runs `atskills <argv>` in a fresh home folder (also its working folder unless `cwd` says), with `env` on
 * top of HOME, XDG_CONFIG_HOME and ATSKILLS_CACHE, and `stdin` (text, or chunks) piped in.
 */
export async function runCaptured(
  argv: string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: string | (Buffer | string)[]; cwd?: string } = {},
): Promise<CapturedRun> {
  const home = await mkdtemp(path.join(tmpdir(), 'atskills-cli-'));
  let stdout = '';
  let stderr = '';
  const stdin = options.stdin;
  const code = await runCli(argv, {
    cwd: options.cwd ?? home,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      ATSKILLS_CACHE: path.join(home, 'cache'),
      ...options.env,
    },
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    ...(stdin === undefined
      ? {}
      : { stdin: typeof stdin === 'string' ? pipedStdin(Buffer.from(stdin)) : pipedStdin(...stdin) }),
  });
  return { code, stdout, stderr };
}
