import { CommanderError } from 'commander';
import { CliContext, type CliIo } from './context.js';
import { adviceFor, EXIT, exitCodeFor } from './exit-codes.js';
import { buildProgram } from './program.js';

export type { CliIo, Output } from './context.js';
export { EXIT, exitCodeFor } from './exit-codes.js';

/** Runs `atskills <argv>` in-process and returns its exit code (main.ts and tests call this). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const ctx = new CliContext(io);
  const program = await buildProgram(ctx, argv);
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return EXIT.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed help, the version, or what was wrong with the command line.
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.exitCode === 0
        ? EXIT.ok
        : EXIT.usage;
    }
    const code = exitCodeFor(error);
    const message = error instanceof Error ? error.message : String(error);
    if (code === EXIT.failure && !(error instanceof Error && 'code' in error)) {
      ctx.err(`atskills: unexpected failure: ${error instanceof Error ? (error.stack ?? message) : message}`);
    } else {
      ctx.err(`atskills: ${message}${adviceFor(error, argv[0])}`);
    }
    return code;
  }
}
