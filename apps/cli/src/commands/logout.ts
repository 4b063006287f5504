import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** `atskills logout`: forgets the stored token (the hub URL stays); the token itself stays valid on the hub. */
export function registerLogout(program: Command, ctx: CliContext): void {
  program
    .command('logout')
    .description('Remove the stored token from the config file (revoke it on the hub to end it there)')
    .addHelpText('after', '\nExample:\n  atskills logout')
    .action(async () => {
      const [{ configFileFrom }, { readStoredConfig, writeStoredConfig }] = await Promise.all([
        import('@atskills/protocol/node'),
        import('../config-file.js'),
      ]);
      const stored = await readStoredConfig(ctx.io.env);
      const file = configFileFrom(ctx.io.env);
      if (!stored.token) ctx.out(`Not logged in (no token in ${file}).`);
      else {
        await writeStoredConfig(ctx.io.env, stored.hub ? { hub: stored.hub } : {});
        ctx.out(`Logged out of ${stored.hub ?? 'the hub'}: the token was removed from ${file}.`);
      }
      if (ctx.io.env.ATSKILLS_TOKEN)
        ctx.err('warning: ATSKILLS_TOKEN is set in the environment and still sends a token; unset it too.');
    });
}
