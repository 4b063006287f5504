import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills login --hub <url> [--token <token>]`: store the hub URL and token (mode 0600). */
export function registerLogin(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description('Store the hub URL and an access token in $XDG_CONFIG_HOME/atskills/config.json (mode 0600)')
    .requiredOption('--hub <url>', 'the hub base URL, e.g. https://hub.example.org')
    .option('--token <token>', 'the token (default: read from stdin, so it stays out of shell history)')
    .addHelpText(
      'after',
      '\nExamples:\n  echo "$HUB_TOKEN" | atskills login --hub https://hub.example.org\n  atskills login --hub http://127.0.0.1:8080 --token atk_...',
    )
    .action(async (opts: { hub: string; token?: string }) => {
      const [{ ResolveError }, { writeStoredConfig }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../config-file.js'),
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
      const file = await writeStoredConfig(ctx.io.env, { hub: hub.href.replace(/\/+$/, ''), token });
      ctx.out(`Logged in to ${hub.origin}; token stored in ${file}`);
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
