import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { withoutIdentity } from '../format/resolved.js';
import { shortRev } from '../format/save.js';

/**
 * `atskills outdated [--json]`: a read-only check of every saved and installed cloud skill against
 * upstream, in one `POST /v1/resolve` (per 128), with `git ls-remote` for `gh:` the hub does not hold.
 * Exit 8 when something is out of date or gone, 4 when something could not be checked, else 0.
 */
export function registerOutdated(program: Command, ctx: CliContext): void {
  program
    .command('outdated')
    .description('Check saved and installed cloud skills against upstream (read-only)')
    .option('--json', 'print {"items":[...],"outdated":n}')
    .addHelpText(
      'after',
      '\nExit codes: 0 everything up to date, 8 something changed or is gone upstream, 4 something could\nnot be checked (hub or git unreachable). `atskills update --all` refreshes untouched saved copies.\n\nExample:\n  atskills outdated',
    )
    .action(async (opts: { json?: boolean }) => {
      const [{ ResolveResponse }, { checkOutdated, outdatedExitCode }, { hubRequest }] = await Promise.all([
        import('@atskills/protocol'),
        import('../outdated-check.js'),
        import('../hub-client.js'),
      ]);
      const projectDir = await ctx.projectDir();
      const resolver = await ctx.resolver();
      const settings = await ctx.settings();
      const report = await checkOutdated(projectDir, {
        cached: async (identity) => (await resolver.cache.read(identity))?.meta,
        resolve: async (items) => {
          const raw = await hubRequest(settings, 'POST', '/v1/resolve', {
            body: Buffer.from(JSON.stringify({ items })),
            contentType: 'application/json',
          });
          const parsed = ResolveResponse.safeParse(raw);
          if (!parsed.success)
            throw new Error("the hub's answer to POST /v1/resolve does not match the protocol");
          return parsed.data.items;
        },
        headCommit: (id) => resolver.headCommit(id),
      });
      const { rows, outdated, unchecked } = report;
      const exit = outdatedExitCode(report);
      if (exit !== EXIT.ok) ctx.fail(exit);
      if (opts.json) return ctx.json({ items: rows, outdated });
      if (rows.length === 0) return ctx.out('Nothing saved or installed from the cloud.');
      for (const r of rows) {
        const change =
          r.status === 'outdated' ? `  ${shortRev(r.held ?? '?')} -> ${shortRev(r.latest ?? '?')}` : '';
        const detail = r.detail === undefined ? undefined : withoutIdentity(r.identity, r.detail);
        const why = detail ? `  (${detail})` : '';
        ctx.out(
          `${r.status.padEnd(10)}  ${r.identity}  [${r.kind}${r.kind === 'saved' && r.installed ? ', installed' : ''}]${change}${why}`,
        );
      }
      const parts = [
        ...(outdated > 0 ? [`${outdated} out of date or gone`] : []),
        ...(unchecked > 0 ? [`${unchecked} could not be checked`] : []),
      ];
      ctx.out(
        `${rows.length} checked: ${parts.length === 0 ? 'everything is up to date' : parts.join(', ')}.`,
      );
      if (rows.some((r) => r.kind === 'saved' && r.status === 'outdated'))
        ctx.out('Run `atskills update --all` to refresh the untouched saved copies.');
    });
}
