import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills whoami [--json]`: who the stored (or ATSKILLS_TOKEN) token belongs to, as the hub says. */
export function registerWhoami(program: Command, ctx: CliContext): void {
  program
    .command('whoami')
    .description('Show which hub and user the token belongs to, and its scopes')
    .option('--json', 'print {"hub","user","admin","scopes","namespaces"}')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 7 no token or the hub refuses it, 4 the hub is unreachable.\n\nExample:\n  atskills whoami',
    )
    .action(async (opts: { json?: boolean }) => {
      const [{ ResolveError }, { hubRequest }, { WhoAmI, describeWhoAmI }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../hub-client.js'),
        import('../whoami-answer.js'),
      ]);
      const settings = await ctx.settings();
      if (!settings.hubToken)
        throw new ResolveError(
          'no-access',
          `Not logged in to ${settings.hubUrl}: run \`atskills login --hub ${settings.hubUrl}\` (or set ATSKILLS_TOKEN).`,
        );
      const me = WhoAmI.safeParse(await hubRequest(settings, 'GET', '/admin/me'));
      if (!me.success)
        throw new ResolveError('network', `The hub's answer to GET /admin/me is not who a token is.`);
      if (opts.json) return ctx.json({ hub: settings.hubUrl, ...me.data });
      ctx.out(`${settings.hubUrl}: ${describeWhoAmI(me.data)}`);
    });
}
