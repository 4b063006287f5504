/** Runs the built `atskills` client (apps/cli/bin/atskills.js, what users run) as a child process. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './env.js';

const execFileAsync = promisify(execFile);
const bin = path.join(repoRoot, 'apps', 'cli', 'bin', 'atskills.js');

/** Fails with the command to run when the client is not built. */
export function requireBuiltCli(): void {
  if (!existsSync(path.join(repoRoot, 'apps', 'cli', 'dist', 'main.js'))) {
    throw new Error('the atskills client is not built: run `npm run build` first');
  }
}

export interface CliRun {
  ms: number;
  code: number;
  stdout: string;
  stderr: string;
}

/** `atskills <args>` in `cwd` with `env` (added to a clean PATH/HOME environment); timed end to end. */
export async function runAtskills(args: string[], cwd: string, env: Record<string, string>): Promise<CliRun> {
  const started = performance.now();
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [bin, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { ms: performance.now() - started, code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return {
      ms: performance.now() - started,
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    };
  }
}

/** Times any command (the `cat` floor). */
export async function timeCommand(file: string, args: string[]): Promise<number> {
  const started = performance.now();
  await execFileAsync(file, args, { maxBuffer: 64 * 1024 * 1024 });
  return performance.now() - started;
}
