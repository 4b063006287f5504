/**
 * Runs the `atskills` CLI for tests: in-process through runCli (fast, the default), or as a child process
 * (`tsx apps/cli/src/main.ts`) for tests that need real processes - concurrency and SIGKILL; and builds
 * the installable bundle for tests of other apps that serve or install it (the hub's /cli/atskills.tgz) or
 * run it as an agent host does (`atskills` on PATH).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleClient } from '../../apps/cli/scripts/bundle.js';
import { runCli } from '../../apps/cli/src/index.js';

/** The CLI's suggestion client (what the prompt hook calls), for tests of the hub's /v1/suggest. */
export { fetchSuggestions } from '../../apps/cli/src/suggest-client.js';
/** Builds the installable client package (what a hub serves at /cli/atskills.tgz) into a folder. */
export { bundleClient };

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
    ...(options.stdin !== undefined ? { stdin: stdinOf(options.stdin) } : {}),
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

/**
 * Bundles the client into `<dir>/pack` and puts an `atskills` that runs it into `<dir>/bin` (what a global
 * install gives a host's hooks); returns the bin folder, to put first on PATH.
 */
export async function installBundledClient(dir: string): Promise<string> {
  const pack = path.join(dir, 'pack');
  await bundleClient(pack);
  const binDir = path.join(dir, 'bin');
  await mkdir(binDir);
  await writeFile(
    path.join(binDir, 'atskills'),
    `#!/bin/sh\nexec "${process.execPath}" "${path.join(pack, 'bin', 'atskills.js')}" "$@"\n`,
  );
  await chmod(path.join(binDir, 'atskills'), 0o755);
  return binDir;
}

/** Every file under `root` with its bytes (base64), and every folder: what "restored byte for byte" compares. */
export async function snapshotTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        out[`${child}/`] = '';
        await walk(child);
      } else out[child] = (await readFile(path.join(root, child))).toString('base64');
    }
  };
  await walk('');
  return out;
}

/** A stdin stand-in for `runCli`: one chunk holding `text`, read as an async iterable like process.stdin. */
export async function* stdinOf(text: string): AsyncGenerator<Buffer> {
  yield Buffer.from(text);
}
