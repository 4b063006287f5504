/**
 * Runs the `atskills` CLI for tests: in-process through runCli (fast, the default), or as a child process
 * (`tsx apps/cli/src/main.ts`) for tests that need real processes - concurrency and SIGKILL; and builds
 * the installable bundle for tests of other apps that serve or install it (the hub's /cli/atskills.tgz).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { runCli } from '../../apps/cli/src/index.js';

/** Builds the installable client package (what a hub serves at /cli/atskills.tgz) into a folder. */
export { bundleClient } from '../../apps/cli/scripts/bundle.js';
/** The CLI's suggestion client (what the prompt hook calls), for tests of the hub's /v1/suggest. */
export { fetchSuggestions } from '../../apps/cli/src/suggest-client.js';

import { repoRoot } from './corpus.js';

/** What one CLI run printed and returned. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of a CLI run: the working folder, the environment, and (for login) stdin text. */
export interface CliRunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin?: string;
}

/** Runs `atskills <argv>` in-process and captures its output. */
export async function runCliCaptured(argv: string[], options: CliRunOptions): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    cwd: options.cwd,
    env: options.env,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    ...(options.stdin !== undefined ? { stdin: [Buffer.from(options.stdin)] } : {}),
  });
  return { code, stdout, stderr };
}

/** Parses the JSON a `--json` run printed (fails the test with the output when it is not JSON). */
export function parseJsonOutput<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** A CLI child process and the promise of its result. */
export interface CliChild {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/**
 * Starts `atskills <argv>` as a child process from the TypeScript sources. `detached` puts it in its own
 * process group so a test can SIGKILL it together with the git processes it started.
 */
export function spawnCli(argv: string[], options: CliRunOptions & { detached?: boolean }): CliChild {
  const tsx = path.join(repoRoot, 'node_modules', '.bin', 'tsx');
  const main = path.join(repoRoot, 'apps', 'cli', 'src', 'main.ts');
  const child = spawn(tsx, ['--conditions=@atskills/source', main, ...argv], {
    cwd: options.cwd,
    env: options.env,
    detached: options.detached ?? false,
    stdio: [options.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
  return { child, done };
}
