#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { runCli } from './index.js';

exitQuietlyOnClosedPipe([process.stdout, process.stderr]);

/**
 * The hub this copy of the client came from: `hub.json` beside `dist/`, which the hub writes into the
 * package it serves (`GET /cli/atskills.tgz`). Absent in the repository, where the default stays local.
 */
function packagedHub(): string | undefined {
  try {
    const hub = (
      JSON.parse(readFileSync(new URL('../hub.json', import.meta.url), 'utf8')) as { hub?: unknown }
    ).hub;
    return typeof hub === 'string' && hub !== '' ? hub : undefined;
  } catch {
    return undefined;
  }
}

// process.stdin is built on first access (a socket or TTY stream: measurable on every start), and only
// `login` and `hook` read it.
const lazyStdin = {
  get isTTY() {
    return process.stdin.isTTY;
  },
  [Symbol.asyncIterator]: (): AsyncIterator<Buffer | string> => process.stdin[Symbol.asyncIterator](),
};

// The process entry: real streams in, exit code out. Everything else lives in runCli for in-process tests.
const defaultHub = packagedHub();
const code = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: lazyStdin,
  ...(defaultHub ? { defaultHub } : {}),
});
process.exitCode = code;
// A hook has answered once runCli returns: requests it stopped waiting for (a hub that hangs) must not keep
// the host waiting for the process to end. Exit once the answer is written out (git children are killed on exit).
if (process.argv[2] === 'hook') process.stdout.write('', () => process.exit(code));
