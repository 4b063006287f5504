#!/usr/bin/env node
import { runCli } from './index.js';

// The process entry: real streams in, exit code out. Everything else lives in runCli for in-process tests.
const code = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
process.exitCode = code;
