import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills login --hub <url> [--token <token>]`: store the hub URL and token (mode 0600). */
export function registerLogin(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description(
      'Check a token with the hub, then store the hub URL and the token in $XDG_CONFIG_HOME/atskills/config.json (mode 0600); the token is sent to that hub only, whatever ATSKILLS_HUB names later',
    )
    .requiredOption('--hub <url>', 'the hub, e.g. https://hub.example.org (or <origin>/api/skills)')
    .option('--token <token>', 'the token (default: read from stdin, so it stays out of shell history)')
    .addHelpText(
      'after',
      '\nExamples:\n  echo "$HUB_TOKEN" | atskills login --hub https://hub.example.org\n  atskills login --hub http://127.0.0.1:8080 --token ask_...',
    )
    .action(async (opts: { hub: string; token?: string }) => {
      const [
        { ResolveError, hubBaseUrl },
        { writeStoredConfig },
        { hubRequest },
        { WhoAmI, describeWhoAmI },
      ] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../config-file.js'),
        import('../hub-client.js'),
        import('../whoami-answer.js'),
      ]);
      let hub: URL;
      try {
        hub = new URL(opts.hub);
      } catch {
        throw new ResolveError('usage', `"${opts.hub}" is not a URL; write it like https://hub.example.org`);
      }
      if (hub.protocol !== 'http:' && hub.protocol !== 'https:')
        throw new ResolveError('usage', 'The hub URL must start with http:// or https://');
      const token = (opts.token ?? (await readAll(ctx))).trim();
      if (token === '' || /\s/.test(token))
        throw new ResolveError('usage', 'Give one token with --token or on stdin.');
      const hubUrl = hubBaseUrl(hub.href);
      // Ask the hub who the token belongs to before storing anything: a typo must not look like a login.
      let answer: unknown;
      try {
        answer = await hubRequest({ ...(await ctx.settings()), hubUrl }, 'GET', '/admin/me', { token });
      } catch (error) {
        if (error instanceof ResolveError && error.code === 'no-access')
          throw new ResolveError(
            'no-access',
            `The hub at ${hubUrl} refused this token (${String(error.details?.status ?? 401)}); nothing was stored. Check that you pasted the whole token and that it is not expired or revoked.`,
            error.details,
          );
        throw error;
      }
      const me = WhoAmI.safeParse(answer);
      if (!me.success)
        throw new ResolveError(
          'network',
          `${hubUrl} did not answer GET /admin/me like an atskills hub; nothing was stored.`,
        );
      const file = await writeStoredConfig(ctx.io.env, { hub: hubUrl, token });
      ctx.out(`Logged in to ${hubUrl} as ${describeWhoAmI(me.data)}`);
      ctx.err(`token stored in ${file}`);
    });
}

async function readAll(ctx: CliContext): Promise<string> {
  if (!ctx.io.stdin) return '';
  if ((ctx.io.stdin as { isTTY?: boolean }).isTTY) ctx.err('Paste the token, then press Enter and Ctrl-D:');
  const chunks: string[] = [];
  for await (const chunk of ctx.io.stdin)
    chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
  return chunks.join('');
}
