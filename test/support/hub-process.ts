/**
 * The hub as a real child process (`apps/api/src/server.ts`), for tests of what only a running hub does:
 * holding the embedded database's folder, running a crawl asked for by another process, a restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { repoRoot } from './corpus.js';

/**
 * The settings of a fresh clone's `npm start` on the data folder `dataDir`: no server database, Redis or
 * Meilisearch (CI exports those for other tests, so they are set empty), any free port on 127.0.0.1, logs
 * at info (startHubProcess reads the listening line). `extra` adds or overrides.
 */
export function embeddedHubEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: '',
    REDIS_URL: '',
    MEILI_URL: '',
    ATSKILLS_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** A hub process that listens, and the promise of its exit code. */
export interface HubProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** Everything it wrote to stdout so far (its log lines). */
  output(): string;
}

/**
 * Starts `server.ts` with exactly `env` (nothing inherited); resolves once it logs that it listens. If it
 * exits first, rejects with an error carrying its exit `code` and `stderr` (a refused start is a result).
 */
export function startHubProcess(env: NodeJS.ProcessEnv): Promise<HubProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=@atskills/source', '--import', 'tsx', 'apps/api/src/server.ts'],
    { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /"msg":"hub listening on (http:\/\/[^"\s]+)/.exec(stdout);
      if (match?.[1]) resolve({ child, url: match[1], exited, output: () => stdout });
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    void exited.then((code) =>
      reject(Object.assign(new Error(`hub exited with ${code}: ${stderr}`), { code, stderr })),
    );
  });
}

/** Stops a hub process that is still running (`signal`, SIGTERM by default) and waits for it to exit. */
export async function stopHubProcess(
  hub: HubProcess | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (hub?.child.exitCode !== null) return;
  hub.child.kill(signal);
  await hub.exited;
}
