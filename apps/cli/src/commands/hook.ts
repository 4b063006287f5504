import type { Command } from 'commander';
import type { CliContext, Output } from '../context.js';

/**
 * `atskills hook session-start|user-prompt`: what `atskills init --agent claude-code` installs as Claude
 * Code's SessionStart and UserPromptSubmit hooks. Claude Code's hook contract: the event as JSON on stdin
 * (`cwd`, and for UserPromptSubmit `prompt`), and on stdout, exit 0,
 * `{"hookSpecificOutput":{"hookEventName","additionalContext"}}`, whose text is added to the model's context.
 *
 * A hook must never hold up or block a session: it always exits 0 (exit 2 would block the prompt), a
 * prompt without `@skills:` is answered without loading the resolver, probes time out after a few seconds
 * (a hub that is down serves the cache marked stale), and a problem is one note line in the context.
 */
const EVENTS = { 'session-start': 'SessionStart', 'user-prompt': 'UserPromptSubmit' } as const;
type HookEvent = keyof typeof EVENTS;

/** The probe timeout of hooks unless ATSKILLS_PROBE_TIMEOUT_MS says otherwise. */
const HOOK_PROBE_TIMEOUT_MS = '3000';

class Capture implements Output {
  text = '';
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

async function readStdin(ctx: CliContext): Promise<string> {
  if (!ctx.io.stdin || (ctx.io.stdin as { isTTY?: boolean }).isTTY) return '';
  let text = '';
  for await (const chunk of ctx.io.stdin) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

/**
 * What a sub-run said on stderr that the agent should know, as one note: for the session start its first
 * warning (a stale or failing line); for a prompt every line (what :save and :install did, warnings).
 */
function noteFrom(event: HookEvent, stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim().replace(/^atskills:\s*/, ''))
    .filter((l) => l !== '');
  if (event === 'session-start') return lines.find((l) => l.startsWith('warning:'));
  return lines.length ? lines.join('; ') : undefined;
}

export function registerHook(program: Command, ctx: CliContext): void {
  program
    .command('hook')
    .description('Claude Code hook: the event JSON on stdin, hookSpecificOutput.additionalContext on stdout')
    .argument(
      '<event>',
      "session-start (the resident block) or user-prompt (resolve the prompt's references)",
    )
    .action(async (event: string) => {
      if (!Object.hasOwn(EVENTS, event)) {
        ctx.err(`atskills hook: unknown event "${event}" (session-start or user-prompt)`);
        return;
      }
      let input: { cwd?: unknown; prompt?: unknown } = {};
      try {
        const text = await readStdin(ctx);
        if (text.trim() !== '') input = JSON.parse(text) as typeof input;
      } catch {
        ctx.err('atskills hook: stdin is not JSON; nothing injected');
        return;
      }
      const prompt = typeof input.prompt === 'string' ? input.prompt : '';
      if (event === 'user-prompt' && !prompt.includes('@skills:')) return; // nothing to resolve: stay silent
      const cwd = typeof input.cwd === 'string' && input.cwd !== '' ? input.cwd : ctx.io.cwd;
      const env = { ...ctx.io.env };
      env.ATSKILLS_PROBE_TIMEOUT_MS ??= HOOK_PROBE_TIMEOUT_MS;
      const stdout = new Capture();
      const stderr = new Capture();
      // The same code paths as `atskills prompt` and `atskills expand`, run in this process.
      const { runCli } = await import('../index.js');
      const argv = event === 'session-start' ? ['prompt'] : ['expand', prompt];
      await runCli(argv, { ...ctx.io, cwd, env, stdout, stderr });
      const context = render(
        event as HookEvent,
        stdout.text.trim(),
        noteFrom(event as HookEvent, stderr.text),
      );
      if (context === undefined) return;
      ctx.out(
        JSON.stringify({
          hookSpecificOutput: { hookEventName: EVENTS[event as HookEvent], additionalContext: context },
        }),
      );
    });
}

function render(event: HookEvent, body: string, note: string | undefined): string | undefined {
  const noteLine = note ? `(atskills note: ${note})` : undefined;
  if (event === 'session-start') {
    if (body === '' && !noteLine) return undefined;
    return [
      'Skills resident in this project (@skills protocol). When one applies, load its instructions with `atskills get <identity>`:',
      body,
      noteLine,
    ]
      .filter((part) => part !== undefined && part !== '')
      .join('\n');
  }
  const stale =
    body.includes('status="stale') && !noteLine
      ? '(atskills note: the source could not be checked; cached copies served, marked stale)'
      : undefined;
  return [body, noteLine, stale].filter((part) => part !== undefined && part !== '').join('\n') || undefined;
}
