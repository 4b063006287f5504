import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Why a git command failed, classified once here; each caller maps the kind to its own terms (the client
 * to ResolveError codes, the crawler to job outcomes and retries).
 */
export type GitFailureKind =
  /** No such repository (404, 410, "repository not found"). */
  | 'not-found'
  /** A ref or object the server does not have (a branch deleted since the probe, an unknown revision). */
  | 'ref-not-found'
  /** Credentials missing or refused (401, 403). */
  | 'access-denied'
  | 'rate-limited'
  /** The host could not be reached, or the connection failed or stalled. */
  | 'unreachable'
  /** The server answered with a 5xx. */
  | 'server-error'
  /** The runner's own `timeoutMs` elapsed (git was killed). */
  | 'timeout'
  /** The caller's AbortSignal fired (git was killed). */
  | 'aborted'
  /** git could not be started at all (not installed?). */
  | 'not-started'
  | 'other';

/** A failed git command with its classified kind and the head of its stderr. */
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

/** Options of one git invocation. */
export interface RunGitOptions {
  cwd?: string;
  /** Aborting kills git and the helpers it started (job timeouts, shutdown). */
  signal?: AbortSignal;
  /** Kill git and fail with kind `timeout` after this long. */
  timeoutMs?: number;
  /** Written to git's stdin. */
  input?: string | Buffer;
  /** Sent as HTTP Basic auth (`x-access-token`) through GIT_CONFIG_* in the environment, never in argv. */
  token?: string;
  /** Extra environment (e.g. GIT_NO_LAZY_FETCH). */
  env?: Record<string, string>;
  /** Extra git configuration, passed as GIT_CONFIG_* (never on the command line). */
  config?: readonly (readonly [string, string])[];
  /**
   * Read the user's and the system's git configuration (proxies, CA bundles, `url.insteadOf`, credential
   * helpers) and environment: the client opts in, since it runs on the user's machine for the user. Off,
   * git runs isolated from the machine's configuration, with a minimal environment (the crawler).
   */
  userConfig?: boolean;
}

// Keep the head of stderr only: a hostile server can make git print without end.
const STDERR_CAP = 64 * 1024;

/** The environment of one git process: never interactive; isolated unless `userConfig`. */
function gitEnvironment(options: RunGitOptions): NodeJS.ProcessEnv {
  const nonInteractive = {
    // A missing credential must be a "no access" answer, never a prompt that blocks.
    GIT_TERMINAL_PROMPT: '0',
    GCM_INTERACTIVE: 'never',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    LANG: 'C',
    LC_ALL: 'C',
  };
  const config: (readonly [string, string])[] = [];
  let env: NodeJS.ProcessEnv;
  if (options.userConfig) {
    env = { ...process.env, ...nonInteractive };
  } else {
    env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...nonInteractive,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    };
    config.push(['core.askPass', ''], ['credential.helper', '']);
  }
  config.push(...(options.config ?? []));
  if (options.token) {
    // GitHub accepts a token as the password of basic auth with any user name.
    const basic = Buffer.from(`x-access-token:${options.token}`).toString('base64');
    config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  Object.assign(env, options.env);
  // Appended after any GIT_CONFIG_* entries the user's environment already holds.
  const first = options.userConfig ? Number(env.GIT_CONFIG_COUNT ?? 0) || 0 : 0;
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${first + i}`] = key;
    env[`GIT_CONFIG_VALUE_${first + i}`] = value;
  });
  if (first + config.length > 0) env.GIT_CONFIG_COUNT = String(first + config.length);
  return env;
}

/** Maps git's stderr to a failure kind (git prints the HTTP status or a fixed phrase). */
export function classifyGitFailure(stderr: string): GitFailureKind {
  const text = stderr.toLowerCase();
  if (
    /could not resolve host|failed to connect|connection refused|couldn't connect|network is unreachable|timed out|no route to host|empty reply from server|connection reset|operation too slow/.test(
      text,
    )
  ) {
    return 'unreachable';
  }
  if (/error: 429|rate limit/.test(text)) return 'rate-limited';
  if (
    /error: 40[13]|could not read username|authentication failed|access denied|terminal prompts disabled/.test(
      text,
    )
  )
    return 'access-denied';
  if (/repository '?.*'? not found|error: 404|error: 410/.test(text)) return 'not-found';
  if (/not our ref|couldn't find remote ref|not found/.test(text)) return 'ref-not-found';
  if (/error: 5\d\d/.test(text)) return 'server-error';
  return 'other';
}

/** The first `fatal:` / `error:` line of git's stderr (else its first line): what a message should quote. */
export function gitFailureDetail(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim());
  return lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.find((l) => l !== '') ?? '';
}

// Process groups of running git commands: killed when this process exits, so no git outlives it.
const running = new Set<number>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/**
 * Runs git and resolves with its stdout as bytes; rejects with a classified GitError. git runs in its own
 * process group, so a timeout or an abort also kills the helpers it starts (git-remote-http holds the
 * connection and the output pipes; killing only git would leave the caller waiting on a hung server).
 */
export function runGit(args: string[], options: RunGitOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const { signal } = options;
    if (signal?.aborted) {
      reject(new GitError('aborted', `git ${args[0]} not started: ${abortReason(signal)}`));
      return;
    }
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnvironment(options),
      stdio: 'pipe',
      detached: true,
    });
    if (child.pid) running.add(child.pid);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const pid of running) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      });
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let errBytes = 0;
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes < STDERR_CAP) err.push(chunk.subarray(0, STDERR_CAP - errBytes));
      errBytes += chunk.length;
    });
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            killGroup(child);
          }, options.timeoutMs);
    const onAbort = () => killGroup(child);
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (child.pid) running.delete(child.pid);
    };
    child.on('error', (error) => {
      settle();
      reject(new GitError('not-started', `git could not be started: ${error.message}`));
    });
    child.on('close', (code) => {
      settle();
      const stderr = Buffer.concat(err).toString('utf8');
      if (signal?.aborted) {
        reject(new GitError('aborted', `git ${args[0]} aborted: ${abortReason(signal)}`, stderr));
      } else if (timedOut) {
        reject(new GitError('timeout', `git ${args[0]} timed out after ${options.timeoutMs} ms`, stderr));
      } else if (code === 0) {
        resolve(Buffer.concat(out));
      } else {
        const detail = gitFailureDetail(stderr) || `exit ${code}`;
        reject(new GitError(classifyGitFailure(stderr), `git ${args[0]} failed: ${detail}`, stderr));
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

/** What `git ls-remote --symref <url> HEAD` says: the head commit (null: empty repository) and branch. */
export function parseLsRemoteHead(text: string): { commit: string | null; branch: string | null } {
  let commit: string | null = null;
  let branch: string | null = null;
  for (const line of text.split('\n')) {
    const symref = /^ref: refs\/heads\/(.+)\tHEAD$/.exec(line);
    if (symref) branch = symref[1] ?? null;
    const ref = /^([0-9a-f]{40,64})\tHEAD$/.exec(line);
    if (ref) commit = ref[1] ?? null;
  }
  return { commit, branch };
}
