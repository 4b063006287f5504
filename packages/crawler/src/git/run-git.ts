import { spawn } from 'node:child_process';

/** Why a git command failed, as far as the crawler needs to know. */
export type GitFailureKind =
  | 'not-found'
  | 'access-denied'
  | 'rate-limited'
  | 'timeout'
  | 'unavailable'
  | 'other';

/** A failed git command, classified from its exit and stderr. */
export class GitError extends Error {
  override name = 'GitError';
  constructor(
    readonly kind: GitFailureKind,
    message: string,
    readonly stderr = '',
  ) {
    super(message);
  }
}

export interface RunGitOptions {
  cwd?: string;
  /** Aborting kills the git process (job timeouts, shutdown). */
  signal?: AbortSignal;
  input?: string | Buffer;
  /** Sent as an Authorization header on HTTP(S) requests; passed through the environment, never argv. */
  token?: string;
  /** Extra environment (e.g. GIT_NO_LAZY_FETCH). */
  env?: Record<string, string>;
}

/** Environment that makes git non-interactive and independent of the machine's git configuration. */
function gitEnvironment(options: RunGitOptions): NodeJS.ProcessEnv {
  const config: [string, string][] = [
    // Keep every pack as a pack: the crawler measures bytes downloaded from pack sizes.
    ['fetch.unpackLimit', '1'],
    ['transfer.unpackLimit', '1'],
    // A server that trickles or stalls is given up on by git itself, well before the job timeout.
    ['http.lowSpeedLimit', '1'],
    ['http.lowSpeedTime', '60'],
    ['protocol.version', '2'],
    ['core.askPass', ''],
    ['credential.helper', ''],
    ['gc.auto', '0'],
    ['maintenance.auto', 'false'],
  ];
  if (options.token) {
    // GitHub accepts a token as the password of basic auth with any user name.
    const basic = Buffer.from(`x-access-token:${options.token}`).toString('base64');
    config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_COUNT: String(config.length),
    ...options.env,
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Maps git's stderr to a failure kind (git prints the HTTP status or a fixed phrase). */
export function classifyGitFailure(stderr: string): GitFailureKind {
  const text = stderr.toLowerCase();
  if (/repository '.*' not found|error: 404|returned error: 410/.test(text)) return 'not-found';
  if (/error: 429|rate limit/.test(text)) return 'rate-limited';
  if (/error: 40[13]|could not read username|authentication failed|access denied/.test(text))
    return 'access-denied';
  if (
    /error: 5\d\d|could not resolve host|failed to connect|connection refused|timed out|operation too slow/.test(
      text,
    )
  ) {
    return 'unavailable';
  }
  return 'other';
}

/** Runs git and resolves with its stdout as bytes; rejects with a classified GitError. */
export function runGit(args: string[], options: RunGitOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new GitError('timeout', `git ${args[0]} not started: ${abortReason(options.signal)}`));
      return;
    }
    // Its own process group, so an abort also kills the helpers git starts (git-remote-http holds the
    // connection and the output pipes; killing only git would leave the job waiting on a hung server).
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnvironment(options),
      stdio: 'pipe',
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let errBytes = 0;
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      // Keep the head of stderr only: hostile servers can make git print a lot.
      if (errBytes < 64 * 1024) err.push(chunk);
      errBytes += chunk.length;
    });
    const onAbort = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(new GitError('other', `git could not be started: ${error.message}`));
    });
    child.on('close', (code) => {
      options.signal?.removeEventListener('abort', onAbort);
      const stderr = Buffer.concat(err).toString('utf8');
      if (options.signal?.aborted) {
        reject(new GitError('timeout', `git ${args[0]} aborted: ${abortReason(options.signal)}`, stderr));
      } else if (code === 0) {
        resolve(Buffer.concat(out));
      } else {
        const firstFatal =
          stderr.split('\n').find((line) => line.startsWith('fatal:')) ?? stderr.trim().split('\n')[0];
        reject(
          new GitError(
            classifyGitFailure(stderr),
            `git ${args[0]} failed: ${firstFatal ?? `exit ${code}`}`,
            stderr,
          ),
        );
      }
    });
    child.stdin.on('error', () => {}); // git may exit before reading all of its input
    child.stdin.end(options.input ?? '');
  });
}

function abortReason(signal: AbortSignal): string {
  const reason = signal.reason;
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}
