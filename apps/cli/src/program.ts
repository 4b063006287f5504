import { Command } from 'commander';
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

/** Adds one command (with its options and action) to the program. */
type Register = (program: Command, ctx: CliContext) => void;

async function loadLifecycle(): Promise<Register> {
  return (await import('./commands/lifecycle.js')).registerLifecycle;
}

/**
 * Every command, by name, loaded on demand: a run imports only the module of the command it runs (all of
 * them for `--help` or an unknown command), so start-up never parses the other commands or what they import.
 * Listed in the order `--help` shows them.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = {
  init: async () => (await import('./commands/init.js')).registerInit,
  refs: async () => (await import('./commands/refs.js')).registerRefs,
  get: async () => (await import('./commands/get.js')).registerGet,
  expand: async () => (await import('./commands/expand.js')).registerExpand,
  save: async () => (await import('./commands/save.js')).registerSave,
  install: async () => (await import('./commands/install.js')).registerInstall,
  triggers: async () => (await import('./commands/triggers.js')).registerTriggers,
  prompt: async () => (await import('./commands/prompt.js')).registerPrompt,
  cache: async () => (await import('./commands/cache.js')).registerCache,
  login: async () => (await import('./commands/login.js')).registerLogin,
  search: async () => (await import('./commands/search.js')).registerSearch,
  suggest: async () => (await import('./commands/suggest.js')).registerSuggest,
  publish: async () => (await import('./commands/publish.js')).registerPublish,
  link: async () => (await import('./commands/link.js')).registerLink,
  hook: async () => (await import('./commands/hook.js')).registerHook,
  // The lifecycle and account commands register together (commands/lifecycle.ts).
  list: loadLifecycle,
  outdated: loadLifecycle,
  update: loadLifecycle,
  remove: loadLifecycle,
  whoami: loadLifecycle,
  logout: loadLifecycle,
};

/** The commands a run of `argv` needs: the one it names, none for `--version`, else all (help, a typo). */
function commandsFor(argv: readonly string[]): string[] {
  const first = argv[0];
  if (argv.length === 1 && (first === '--version' || first === '-V')) return [];
  return first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
}

/**
 * Builds the command tree for one run of `argv`; output and exits go through `ctx`, never the process. Only
 * the command being run is loaded; command modules import only commander, the pure core and formatters at
 * the top, and each action imports the node half of the protocol (resolver, cache, git, tar), the hub client
 * or the packer when it runs, so `refs` and `--help` load none of them.
 */
export async function buildProgram(ctx: CliContext, argv: readonly string[] = []): Promise<Command> {
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
  const registers = await Promise.all(commandsFor(argv).map((name) => COMMANDS[name]!()));
  // A module that registers several commands is loaded for each of their names: register it once.
  for (const register of new Set(registers)) register(program, ctx);
  return program;
}
