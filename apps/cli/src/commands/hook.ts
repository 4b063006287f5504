import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/**
 * `atskills hook session-start|user-prompt --host claude-code|cursor|codex`: what `atskills init --agent
 * <host>` installs as the host's two hooks (SPEC 2.5). Each reads the host's event JSON on stdin, finds the
 * project the way the host names it, and answers on stdout in the host's shape, always with exit 0:
 *
 * - Claude Code (https://docs.anthropic.com/en/docs/claude-code/hooks): SessionStart and UserPromptSubmit
 *   get `{cwd, prompt?}` and answer `{"hookSpecificOutput":{"hookEventName","additionalContext"}}`.
 * - Codex (https://developers.openai.com/codex/hooks): the same event names, input fields and output shape
 *   (its SessionStart output schema allows only `hookEventName` and `additionalContext` there).
 * - Cursor (https://cursor.com/docs/agent/hooks): sessionStart and beforeSubmitPrompt get
 *   `{workspace_roots, prompt?}`; sessionStart answers `{"additional_context"}`; beforeSubmitPrompt must
 *   answer `{"continue": true}` to let the prompt through, and carries `additional_context` beside it (SPEC
 *   2.5; a build that ignores it there is covered by the rule `init` writes: the agent expands itself).
 *
 * A hook never holds a session up: everything it resolves starts at once (the hub's lines in one batch) and
 * nothing waits on the network past one budget (1.5 s from the hook's start); later answers come from the
 * cache, marked stale, with one note line, and what is not cached becomes one line in place of its body.
 * The answer is capped (inject.ts) and framed as third-party text (SPEC 2.8).
 */
const HOSTS = ['claude-code', 'cursor', 'codex'] as const;
type Host = (typeof HOSTS)[number];
type HookEvent = 'session-start' | 'user-prompt';

/** Each host's name for the two events. */
const EVENT_NAMES: Record<Host, Record<HookEvent, string>> = {
  'claude-code': { 'session-start': 'SessionStart', 'user-prompt': 'UserPromptSubmit' },
  codex: { 'session-start': 'SessionStart', 'user-prompt': 'UserPromptSubmit' },
  cursor: { 'session-start': 'sessionStart', 'user-prompt': 'beforeSubmitPrompt' },
};

/** The network budget of one hook (ATSKILLS_HOOK_BUDGET_MS overrides it, for tests and benchmarks). */
export const HOOK_BUDGET_MS = 1_500;

/** The host's event, as far as a hook reads it. */
interface HookInput {
  cwd?: unknown;
  workspace_roots?: unknown;
  prompt?: unknown;
}

/**
 * The host's event from stdin: a JSON object, after a UTF-8 byte order mark if a host writes one. Anything
 * else (no JSON, or JSON that is no object: `null`, a number, an array) is answered as no event, from the
 * working folder, with `note` told why.
 */
function readEvent(text: string, note: (why: string) => void): HookInput {
  const json = (text.startsWith('\uFEFF') ? text.slice(1) : text).trim();
  if (json === '') return {};
  let event: unknown;
  try {
    event = JSON.parse(json);
  } catch {
    note('stdin is not JSON; answered from the working folder');
    return {};
  }
  if (event !== null && typeof event === 'object' && !Array.isArray(event)) return event as HookInput;
  note('stdin is not a JSON object; answered from the working folder');
  return {};
}

/** The project folder the host names: `workspace_roots[0]` for Cursor, `cwd` for the others. */
function projectFolder(host: Host, input: HookInput, fallback: string): string {
  if (host === 'cursor' && Array.isArray(input.workspace_roots)) {
    const first = input.workspace_roots[0];
    if (typeof first === 'string' && first !== '') return first;
  }
  return typeof input.cwd === 'string' && input.cwd !== '' ? input.cwd : fallback;
}

/** The host-shaped answer carrying `context` (undefined: nothing to add). */
function answerFor(host: Host, event: HookEvent, context: string | undefined): string | undefined {
  if (host === 'cursor') {
    const extra = context === undefined ? {} : { additional_context: context };
    return JSON.stringify(event === 'user-prompt' ? { continue: true, ...extra } : extra);
  }
  if (context === undefined) return undefined;
  return JSON.stringify({
    hookSpecificOutput: { hookEventName: EVENT_NAMES[host][event], additionalContext: context },
  });
}

function budgetMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.ATSKILLS_HOOK_BUDGET_MS);
  return Number.isInteger(n) && n > 0 ? n : HOOK_BUDGET_MS;
}

/**
 * Whether anything may turn suggestions on: the hook's flag, ATSKILLS_SUGGEST, or a `suggest` key in the
 * config file. Checked without loading the settings, so that a message without a reference, suggestions
 * off, is still answered without loading the resolver (the config path is configFileFrom's, in short).
 */
function suggestionsMayBeOn(env: NodeJS.ProcessEnv, flag: boolean): boolean {
  if (flag || (env.ATSKILLS_SUGGEST ?? '') !== '') return true;
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), '.config');
  try {
    return readFileSync(path.join(base, 'atskills', 'config.json'), 'utf8').includes('"suggest"');
  } catch {
    return false;
  }
}

/**
 * The hub's suggestions for `prompt`, rendered, or undefined (off, nothing left, abstained, slow, down). It
 * waits at most the suggestion deadline, and never past the hook's own.
 */
async function suggestionsFor(
  ctx: CliContext,
  prompt: string,
  cwd: string,
  deadline: number,
  flag: boolean,
): Promise<string | undefined> {
  const settings = await ctx.settings();
  const { DEFAULT_SUGGEST_LIMIT, findProjectDir } = await import('../node-half.js');
  // ATSKILLS_SUGGEST or the config file decide; else the hook's `--suggest` (what `init` recorded).
  const limit = settings.suggest ?? (flag ? DEFAULT_SUGGEST_LIMIT : 0);
  if (limit <= 0 || prompt.trim() === '') return undefined;
  const wait = Math.min(settings.suggestTimeoutMs, deadline - Date.now());
  if (wait <= 0) return undefined;
  // The request leaves first; what the project already has is read while the hub answers. More than the
  // limit is asked for: the ones the project already has are dropped here.
  const { fetchSuggestions } = await import('../suggest-client.js');
  const asking = fetchSuggestions(settings, prompt, { limit: Math.min(10, limit + 5), deadlineMs: wait });
  const { knownSkills, renderSuggestions } = await import('../hook-suggest.js');
  const [results, known] = await Promise.all([
    asking,
    findProjectDir(cwd).then((dir) => knownSkills(prompt, dir)),
  ]);
  return renderSuggestions(results, known, limit);
}

/** The text the hook adds to the model's context, or undefined. Never throws for a source's failure. */
async function contextFor(
  ctx: CliContext,
  event: HookEvent,
  input: HookInput,
  cwd: string,
  deadline: number,
  budget: number,
  suggestFlag: boolean,
): Promise<string | undefined> {
  const prompt = typeof input.prompt === 'string' ? input.prompt : '';
  // Suggestions start first and run beside the references; they never make the hook fail.
  const suggesting =
    event === 'user-prompt' && suggestionsMayBeOn(ctx.io.env, suggestFlag)
      ? suggestionsFor(ctx, prompt, cwd, deadline, suggestFlag).catch(() => undefined)
      : Promise.resolve(undefined);
  // A message without a reference is answered without loading the resolver.
  if (event === 'user-prompt' && !prompt.includes('@skills:')) {
    const suggestions = await suggesting;
    return suggestions === undefined ? undefined : (await import('../hook-suggest.js')).alone(suggestions);
  }
  const { findProjectDir, Resolver } = await import('../node-half.js');
  const settings = await ctx.settings();
  // Every request of this run ends by the deadline at the latest (the answer does not wait for it anyway).
  const resolver = new Resolver({ ...settings, probeTimeoutMs: budget, fetchTimeoutMs: budget });
  const projectDir = await findProjectDir(cwd);
  const staleNote = (stale: boolean) =>
    stale && Date.now() >= deadline
      ? [`a source did not answer within ${budget / 1000} s; cached copies were served, marked stale`]
      : [];
  if (event === 'session-start') {
    const [{ residentBlock }, { residentAnswer }] = await Promise.all([
      import('@atskills/protocol/node'),
      import('../resident.js'),
    ]);
    const report = await residentBlock(resolver, { projectDir, deadline, countTokens: false });
    return residentAnswer(report, staleNote(report.entries.some((e) => e.stale)));
  }
  const [{ expandMessage }, { renderAnswer }] = await Promise.all([
    import('../expand-message.js'),
    import('../inject.js'),
  ]);
  // A hook cannot ask: `:install` of a flagged skill is left to the user (the note says how).
  const [expansion, suggestions] = await Promise.all([
    expandMessage(resolver, prompt, { projectDir, deadline, requireCheck: true }),
    suggesting,
  ]);
  if (expansion.parts.length === 0 && expansion.notes.length === 0)
    return suggestions === undefined ? undefined : (await import('../hook-suggest.js')).alone(suggestions);
  const staleOnes = expansion.parts.flatMap((p) =>
    p.kind === 'resolved' && p.resolved.stale ? [p.resolved] : [],
  );
  // One line for every stale copy: past the budget it says so; before it (a hub that refused) it gives the
  // first copy's reason.
  const first = staleOnes[0];
  const staleLine =
    staleNote(first !== undefined)[0] ??
    (first ? `cached copies were served, marked stale (${first.staleReason ?? 'not checked'})` : undefined);
  const notes = [...expansion.notes.filter((n) => !/ is stale: /.test(n)), ...(staleLine ? [staleLine] : [])];
  return renderAnswer(expansion.parts, notes, projectDir, suggestions);
}

export function registerHook(program: Command, ctx: CliContext): void {
  program
    .command('hook')
    .description('Agent host hook: the event JSON on stdin, the host-shaped answer on stdout, always exit 0')
    .argument('<event>', "session-start (the resident block) or user-prompt (the message's references)")
    .option(
      '--host <host>',
      `the host whose event and answer shapes to use (${HOSTS.join(', ')})`,
      'claude-code',
    )
    .option(
      '--suggest',
      "append the hub's skill suggestions to user-prompt answers (ATSKILLS_SUGGEST or the config file override it)",
    )
    .action(async (event: string, opts: { host: string; suggest?: boolean }) => {
      const started = Date.now();
      if (event !== 'session-start' && event !== 'user-prompt') {
        ctx.err(`atskills hook: unknown event "${event}" (session-start or user-prompt)`);
        return;
      }
      const host = (HOSTS as readonly string[]).includes(opts.host) ? (opts.host as Host) : undefined;
      if (!host) {
        ctx.err(`atskills hook: unknown host "${opts.host}" (${HOSTS.join(', ')})`);
        return;
      }
      let context: string | undefined;
      try {
        const input = readEvent(await ctx.readStdin(), (note) => ctx.err(`atskills hook: ${note}`));
        const budget = budgetMs(ctx.io.env);
        const cwd = projectFolder(host, input, ctx.io.cwd);
        context = await contextFor(ctx, event, input, cwd, started + budget, budget, opts.suggest === true);
      } catch (error) {
        // Whatever went wrong, the session goes on: the model learns it in one line.
        const message = error instanceof Error ? error.message : String(error);
        context = `(atskills note: the ${event} hook failed: ${message.replace(/\s+/g, ' ')})`;
      }
      const answer = answerFor(host, event, context);
      if (answer !== undefined) ctx.out(answer);
    });
}
