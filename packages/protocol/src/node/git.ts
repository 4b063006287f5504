import { spawn } from 'node:child_process';
import { ResolveError } from './resolve-error.js';

/** Options of one git invocation. */
export interface GitRunOptions {
  cwd?: string;
  /** Extra environment on top of the process's own. */
  env?: Record<string, string>;
  /** Kill git and fail as unreachable after this long. */
  timeoutMs: number;
  /** Written to git's stdin. */
  input?: string;
  /** Bearer token for the git host, sent as an HTTP header, never on the command line. */
  token?: string;
  /** What the user is waiting for, for messages ("gh:o/r"). */
  what: string;
}

/** Runs git and returns its stdout; failures become ResolveErrors classified from git's own message. */
export function runGit(args: string[], options: GitRunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnvironment(options),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.stdin.on('error', () => {}); // git may exit before reading its input; its exit code tells why
    child.stdin.end(options.input ?? '');
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new ResolveError('network', `Could not run git (${error.message}); is git installed?`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new ResolveError(
            'offline',
            `${options.what}: the git server did not answer within ${Math.round(options.timeoutMs / 1000)}s.`,
          ),
        );
      } else if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(classifyGitFailure(Buffer.concat(err).toString('utf8'), options.what));
    });
  });
}

function gitEnvironment(options: GitRunOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Never block on a credential prompt: a missing credential is a "no access" answer.
    GIT_TERMINAL_PROMPT: '0',
    GCM_INTERACTIVE: 'never',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    LC_ALL: 'C',
    ...options.env,
  };
  if (options.token) {
    // GitHub takes a token as the password of HTTP Basic auth; passing it through GIT_CONFIG_* keeps it
    // out of `ps` output and out of any stored remote URL.
    const n = Number(env.GIT_CONFIG_COUNT ?? 0) || 0;
    const basic = Buffer.from(`x-access-token:${options.token}`).toString('base64');
    env.GIT_CONFIG_COUNT = String(n + 1);
    env[`GIT_CONFIG_KEY_${n}`] = 'http.extraHeader';
    env[`GIT_CONFIG_VALUE_${n}`] = `Authorization: Basic ${basic}`;
  }
  return env;
}

/** Maps git's stderr to the protocol's failure codes. */
export function classifyGitFailure(stderr: string, what: string): ResolveError {
  const detail =
    stderr
      .split('\n')
      .map((l) => l.trim())
      .find((l) => /^(fatal|error):/.test(l)) ??
    stderr.trim().split('\n')[0] ??
    '';
  const suffix = detail ? ` (git: ${detail})` : '';
  if (
    /could not resolve host|failed to connect|connection refused|couldn't connect|network is unreachable|connection timed out|no route to host|empty reply from server|connection reset/i.test(
      stderr,
    )
  ) {
    return new ResolveError('offline', `${what}: the git server cannot be reached${suffix}.`);
  }
  if (
    /returned error: 40[13]|authentication failed|could not read username|terminal prompts disabled/i.test(
      stderr,
    )
  ) {
    return new ResolveError(
      'no-access',
      `${what}: access refused; set GITHUB_TOKEN for private repositories${suffix}.`,
    );
  }
  if (
    /repository .* not found|returned error: 404|not our ref|couldn't find remote ref|not found/i.test(stderr)
  ) {
    return new ResolveError('not-found', `${what}: no such repository${suffix}.`);
  }
  return new ResolveError('network', `${what}: the git server gave a broken answer${suffix}.`);
}
