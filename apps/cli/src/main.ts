#!/usr/bin/env node
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { runCli } from './index.js';

exitQuietlyOnClosedPipe([process.stdout, process.stderr]);

// The process entry: real streams in, exit code out. Everything else lives in runCli for in-process tests.
const code = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
process.exitCode = code;
