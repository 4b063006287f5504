import { Command } from 'commander';
import { registerCache } from './commands/cache.js';
import { registerExpand } from './commands/expand.js';
import { registerGet } from './commands/get.js';
import { registerInstall } from './commands/install.js';
import { registerLifecycle } from './commands/lifecycle.js';
import { registerLogin } from './commands/login.js';
import { registerPrompt } from './commands/prompt.js';
import { registerPublish } from './commands/publish.js';
import { registerRefs } from './commands/refs.js';
import { registerSave } from './commands/save.js';
import { registerSearch } from './commands/search.js';
import { registerTriggers } from './commands/triggers.js';
import type { CliContext } from './context.js';

export const VERSION = '0.1.0';

const EXIT_CODES_HELP = `
Exit codes:
  0 ok   1 failure   2 bad identity or usage   3 not found (or gone upstream)
  4 offline, no cache, or network failure   5 over the menu cap (K = 128)
  6 conflict (edited saved copy)   7 no access   8 outdated: something changed upstream

Environment:
  ATSKILLS_CACHE, XDG_CACHE_HOME   the cache folder (default ~/.cache/atskills)
  ATSKILLS_GIT_BASE                git base URL for gh: (default https://github.com)
  GITHUB_TOKEN, ATSKILLS_GITHUB_TOKEN   token sent to the git host
  ATSKILLS_HUB, ATSKILLS_TOKEN     hub URL and token (else the config written by login)
  ATSKILLS_GH_VIA_HUB=1            resolve gh: through the hub's mirror`;

/**
 * Builds the command tree for one run; output and exits go through `ctx`, never the process. Command modules
 * import only commander, the pure core and formatters at the top; each action imports the node half of the
 * protocol (resolver, cache, git, tar), the hub client or the packer when it runs, so `refs` and `--help` load
 * none of them.
 */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('atskills')
    .description('Resolve, save and install @skills references (local first, then a validating cache)')
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
    })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP);
  registerRefs(program, ctx);
  registerGet(program, ctx);
  registerExpand(program, ctx);
  registerSave(program, ctx);
  registerInstall(program, ctx);
  registerTriggers(program, ctx);
  registerPrompt(program, ctx);
  registerCache(program, ctx);
  registerLogin(program, ctx);
  registerSearch(program, ctx);
  registerPublish(program, ctx);
  registerLifecycle(program, ctx);
  return program;
}
