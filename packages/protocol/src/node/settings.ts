import { homedir } from 'node:os';
import path from 'node:path';
import { trimTrailingSlashes } from '../slashes.js';

/** Everything the client reads from its environment, parsed once and frozen. */
export interface ClientSettings {
  /** The machine-wide cache folder (SPEC 1.4). */
  cacheDir: string;
  /** Where `login` stores the hub URL and token. */
  configFile: string;
  /** Base URL of git hosting: `gh:o/r` is `<gitBase>/o/r.git`. */
  gitBase: string;
  /** Token sent to the git host (GITHUB_TOKEN / ATSKILLS_GITHUB_TOKEN), if any. */
  githubToken?: string;
  /** Base URL of the hub. */
  hubUrl: string;
  /** Bearer token for the hub, if any. */
  hubToken?: string;
  /** Resolve `gh:` through the hub's mirror instead of git (ATSKILLS_GH_VIA_HUB=1). */
  ghViaHub: boolean;
  /** How long one revision probe may take before the source counts as unreachable. */
  probeTimeoutMs: number;
  /** How long one fetch may take. */
  fetchTimeoutMs: number;
  /**
   * How many suggestions the user-prompt hook appends (SPEC 2.7): 0 turns them off; undefined when neither
   * ATSKILLS_SUGGEST nor the config file says (the hook's own `--suggest`, written by `init`, decides).
   */
  suggest?: number;
  /** How long the hook waits for suggestions (ms), inside its overall budget. */
  suggestTimeoutMs: number;
  /** Variables set to a value the client cannot read, each with what it expects: their defaults apply. */
  ignored: readonly string[];
}

/** What `login` writes: the hub to talk to and its token. */
export interface StoredConfig {
  hub?: string;
  token?: string;
  /** Suggestions in the user-prompt hook: true/false, or how many (1-10). */
  suggest?: boolean | number;
}

/** Suggestions the hook appends when turned on without a number. */
export const DEFAULT_SUGGEST_LIMIT = 3;

/** How long the hook waits for the hub's suggestions by default (ms): a prompt never waits on them. */
export const DEFAULT_SUGGEST_TIMEOUT_MS = 400;

export const DEFAULT_HUB_URL = 'http://127.0.0.1:8080';
export const DEFAULT_GIT_BASE = 'https://github.com';

/** One environment variable of the client, as docs/settings.md lists it. */
export interface ClientVariable {
  readonly name: string;
  readonly default: string;
  readonly description: string;
}

/**
 * Every environment variable the client reads, with its default and meaning. Plain data rather than a zod
 * schema: the client's start-up path loads no zod. docs/settings.md is generated from it, and a test checks
 * that it names every variable `loadSettings` and the path helpers below read.
 */
export const CLIENT_VARIABLES: readonly ClientVariable[] = [
  {
    name: 'ATSKILLS_HUB',
    default: `the config file \`login\` wrote, else \`${DEFAULT_HUB_URL}\``,
    description:
      "The hub: its origin, or the reference client's form `<origin>/api/skills` (both mean the same hub). A copy installed from a hub defaults to that hub.",
  },
  {
    name: 'ATSKILLS_TOKEN',
    default: 'the config file `login` wrote',
    description: 'The hub token, sent as `Authorization: Bearer`.',
  },
  {
    name: 'ATSKILLS_CACHE',
    default: '`$XDG_CACHE_HOME/atskills`, else `~/.cache/atskills`',
    description: 'The machine-wide cache folder.',
  },
  {
    name: 'XDG_CACHE_HOME',
    default: '`~/.cache`',
    description: 'Where the cache folder goes when ATSKILLS_CACHE is unset.',
  },
  {
    name: 'XDG_CONFIG_HOME',
    default: '`~/.config`',
    description: 'Where `login` keeps `atskills/config.json` (the hub URL and token, mode 0600).',
  },
  {
    name: 'ATSKILLS_GIT_BASE',
    default: `\`${DEFAULT_GIT_BASE}\``,
    description: '`gh:o/r` is `<base>/o/r.git` (GitHub Enterprise, a local test server).',
  },
  {
    name: 'ATSKILLS_GITHUB_TOKEN',
    default: 'GITHUB_TOKEN',
    description:
      'Token sent to the git host (HTTP Basic `x-access-token`, through `GIT_CONFIG_*`, never on the command line).',
  },
  {
    name: 'GITHUB_TOKEN',
    default: 'unset',
    description: 'The git host token when ATSKILLS_GITHUB_TOKEN is unset.',
  },
  {
    name: 'ATSKILLS_GH_VIA_HUB',
    default: 'unset',
    description: "`1`: resolve `gh:` skills through the hub's mirror (HTTPS only) instead of git.",
  },
  {
    name: 'ATSKILLS_PROBE_TIMEOUT_MS',
    default: '`20000`',
    description:
      'A revision probe slower than this (ms) counts as unreachable (the hooks wait at most their budget, `ATSKILLS_HOOK_BUDGET_MS`).',
  },
  {
    name: 'ATSKILLS_HOOK_BUDGET_MS',
    default: '`1500`',
    description:
      "How long (ms) a hook's work may take before it answers from the cache (marked stale) and moves on, start-up not counted (SPEC 2.5).",
  },
  {
    name: 'ATSKILLS_FETCH_TIMEOUT_MS',
    default: '`300000`',
    description:
      'A fetch slower than this (ms) counts as unreachable; `atskills suggest` waits 10000 unless this is set.',
  },
  {
    name: 'ATSKILLS_SUGGEST',
    default: "the config file's `suggest`, else what `init` chose (`--suggest` on the hook), else off",
    description:
      '`1` (or `on`): the user-prompt hook appends up to 3 skill suggestions from the hub (identity and one-line description; those scored under 0.1 left out) after the injected references; a number from 2 to 10: that many; `0` (or `off`): none, whatever `init` chose. Any other value is ignored, with a line on stderr.',
  },
  {
    name: 'ATSKILLS_SUGGEST_TIMEOUT_MS',
    default: `\`${DEFAULT_SUGGEST_TIMEOUT_MS}\``,
    description:
      'How long (ms) the hook waits for suggestions, inside its 1.5 s budget; a slower hub adds none.',
  },
];

/** Where the cache lives: $ATSKILLS_CACHE, else $XDG_CACHE_HOME/atskills, else ~/.cache/atskills. */
export function cacheDirFrom(env: NodeJS.ProcessEnv): string {
  if (env.ATSKILLS_CACHE) return path.resolve(env.ATSKILLS_CACHE);
  if (env.XDG_CACHE_HOME) return path.resolve(env.XDG_CACHE_HOME, 'atskills');
  return path.join(env.HOME || homedir(), '.cache', 'atskills');
}

/** Where the config file lives: $XDG_CONFIG_HOME/atskills/config.json, else ~/.config/atskills/config.json. */
export function configFileFrom(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME
    ? path.resolve(env.XDG_CONFIG_HOME)
    : path.join(env.HOME || homedir(), '.config');
  return path.join(base, 'atskills', 'config.json');
}

/** Builds the settings from an environment and the stored config (environment wins). */
export function loadSettings(env: NodeJS.ProcessEnv, stored: StoredConfig = {}): Readonly<ClientSettings> {
  const githubToken = env.ATSKILLS_GITHUB_TOKEN || env.GITHUB_TOKEN || undefined;
  const hubUrl = hubBaseUrl(env.ATSKILLS_HUB || stored.hub || DEFAULT_HUB_URL);
  // A stored token is the credential of the hub `login` stored with it: never sent to another one.
  const storedTokenHub = hubBaseUrl(stored.hub || DEFAULT_HUB_URL);
  const hubToken = env.ATSKILLS_TOKEN || (storedTokenHub === hubUrl ? stored.token : undefined) || undefined;
  const ignored: string[] = [];
  const positiveInt = (name: string, text: string | undefined, fallback: number): number => {
    const n = Number(text);
    if (Number.isInteger(n) && n > 0) return n;
    if ((text ?? '').trim() !== '')
      ignored.push(`${name}=${JSON.stringify(text)} (a whole number of ms above 0)`);
    return fallback;
  };
  const settings: ClientSettings = {
    cacheDir: cacheDirFrom(env),
    configFile: configFileFrom(env),
    gitBase: trimTrailingSlashes(env.ATSKILLS_GIT_BASE || DEFAULT_GIT_BASE),
    hubUrl,
    ghViaHub: env.ATSKILLS_GH_VIA_HUB === '1',
    probeTimeoutMs: positiveInt('ATSKILLS_PROBE_TIMEOUT_MS', env.ATSKILLS_PROBE_TIMEOUT_MS, 20_000),
    fetchTimeoutMs: positiveInt('ATSKILLS_FETCH_TIMEOUT_MS', env.ATSKILLS_FETCH_TIMEOUT_MS, 300_000),
    suggestTimeoutMs: positiveInt(
      'ATSKILLS_SUGGEST_TIMEOUT_MS',
      env.ATSKILLS_SUGGEST_TIMEOUT_MS,
      DEFAULT_SUGGEST_TIMEOUT_MS,
    ),
    ignored,
  };
  const fromEnv = suggestLimit(env.ATSKILLS_SUGGEST);
  if (fromEnv === undefined && (env.ATSKILLS_SUGGEST ?? '').trim() !== '')
    ignored.push(
      `ATSKILLS_SUGGEST=${JSON.stringify(env.ATSKILLS_SUGGEST)} (on, off or a number from 0 to 10)`,
    );
  const suggest = fromEnv ?? suggestLimit(stored.suggest);
  if (suggest !== undefined) settings.suggest = suggest;
  if (githubToken) settings.githubToken = githubToken;
  if (hubToken) settings.hubToken = hubToken;
  return Object.freeze(settings);
}

/**
 * The hub's base URL from either spelling of ATSKILLS_HUB: the hub's origin (`https://hub.example.org`)
 * or the protocol authors' reference-client form (`https://hub.example.org/api/skills`), which names the
 * compatibility routes; this client talks to `/v1` beside them.
 */
export function hubBaseUrl(url: string): string {
  return trimTrailingSlashes(trimTrailingSlashes(url.trim()).replace(/\/api\/skills$/i, ''));
}

/**
 * How many suggestions a setting asks for: `1`/`on`/`true`/`yes`/true is the default number, a whole number
 * 1-10 that many, `0`/`off`/`false`/`no`/false none; anything else (unset included) says nothing.
 */
export function suggestLimit(value: string | boolean | number | undefined): number | undefined {
  if (value === true) return DEFAULT_SUGGEST_LIMIT;
  if (value === false) return 0;
  const text = String(value ?? '')
    .trim()
    .toLowerCase();
  if (['on', 'true', 'yes'].includes(text)) return DEFAULT_SUGGEST_LIMIT;
  if (['off', 'false', 'no'].includes(text)) return 0;
  if (text === '' || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  if (n === 1) return DEFAULT_SUGGEST_LIMIT; // `ATSKILLS_SUGGEST=1` reads as "on"
  return Math.min(10, n);
}
