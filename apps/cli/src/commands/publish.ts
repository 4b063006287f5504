import { hubParts, PublishResponse, parseIdentity } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { oneLine } from '../format/printable.js';

/** `atskills publish <folder> --to hub:<ns>/<collection> [--public]`: upload a collection (private by default). */
export function registerPublish(program: Command, ctx: CliContext): void {
  program
    .command('publish')
    .description('Pack a folder of skills (leaf rule) and publish it as a hub collection')
    .argument('<folder>', 'the folder holding the skills')
    .requiredOption('--to <identity>', 'hub:<namespace>/<collection>')
    .option('--public', 'anyone may find and read it (default: private)')
    .option('--private', "visible only to the namespace's members (the default)")
    .option('--dry-run', 'show what would be published and stop')
    .option('--json', 'print the hub answer as JSON')
    .addHelpText(
      'after',
      '\nA collection is private unless --public is given, as on the hub.\n\nExamples:\n  atskills publish ./skills --to hub:acme/playbooks\n  atskills publish ./skills --to hub:acme/playbooks --public --dry-run',
    )
    .action(
      async (
        folder: string,
        opts: { to: string; public?: boolean; private?: boolean; dryRun?: boolean; json?: boolean },
      ) => {
        const [{ ResolveError }, { hubRequest }, { packPlan, planPublish }] = await Promise.all([
          import('@atskills/protocol/node'),
          import('../hub-client.js'),
          import('../pack.js'),
        ]);
        const target = parseIdentity(opts.to);
        const { namespace, collection, subpath } =
          target.source === 'hub' ? hubParts(target) : { namespace: '', collection: '', subpath: 'x' };
        if (target.source !== 'hub' || subpath !== '') {
          throw new ResolveError(
            'usage',
            `--to must name a whole hub collection, like hub:acme/playbooks (got ${target.identity}).`,
          );
        }
        if (opts.public && opts.private)
          throw new ResolveError('usage', 'Choose one of --public and --private.');
        const plan = await planPublish(folder, { collection });
        const visibility = opts.public ? 'public' : 'private';
        const inWords =
          visibility === 'public'
            ? 'PUBLIC: anyone can find and read it'
            : `private: only members of ${namespace} can see it (add --public to publish it for everyone)`;
        ctx.err(
          `Publishing ${plan.skills.length} skills (${plan.files.length} files, ${plan.bytes} bytes) from ${plan.folder} to ${target.identity}, ${inWords}:`,
        );
        for (const s of plan.skills)
          ctx.err(`  ${s.path || '.'}  ${s.name}  (${s.files} files, ${s.bytes} bytes)`);
        for (const p of plan.skipped) ctx.err(`  skipped (not a regular file): ${p}`);
        for (const p of plan.ignored) ctx.err(`  left out (.gitignore): ${p}`);
        for (const p of plan.reserved) ctx.err(`  left out (reserved in a skill, the hub refuses it): ${p}`);
        if (opts.dryRun) {
          if (opts.json)
            ctx.json({
              dryRun: true,
              published: false,
              identity: target.identity,
              skills: plan.skills.length,
            });
          else ctx.out(`Dry run: nothing was published to ${target.identity}.`);
          return;
        }
        const settings = await ctx.settings();
        if (!settings.hubToken)
          throw new ResolveError(
            'no-access',
            'Publishing needs a token: run `atskills login --hub <url>` (or set ATSKILLS_TOKEN).',
          );
        const body = await packPlan(plan);
        const route = `/v1/collections/${encodeURIComponent(namespace)}/${encodeURIComponent(collection)}?visibility=${visibility}`;
        const raw = await hubRequest(settings, 'PUT', route, { body, contentType: 'application/gzip' });
        const answer = PublishResponse.safeParse(raw);
        if (!answer.success)
          throw new ResolveError('network', 'The hub accepted the upload but its answer has no revision.');
        if (opts.json) return ctx.json(answer.data);
        // The hub's words go to a terminal: one line each, no control characters.
        for (const w of answer.data.warnings) ctx.err(`warning: ${oneLine(w.message)} [${oneLine(w.code)}]`);
        const { unchanged, revision, previousVisibility } = answer.data;
        // A publish without --public makes a public collection private: easy to do by accident, so said loudly.
        const turned =
          previousVisibility && previousVisibility !== visibility
            ? `, now ${visibility} (was ${previousVisibility})`
            : '';
        if (previousVisibility === 'public' && visibility === 'private')
          ctx.err(
            `warning: ${target.identity} was public and is now private: only members of ${namespace} can read it (publish again with --public to undo).`,
          );
        // Identical content makes no new revision on the hub; say so rather than "Published", but never
        // "Nothing changed" when the visibility did.
        ctx.out(
          unchanged
            ? turned
              ? `Same content: ${target.identity} stays at revision ${revision}${turned}`
              : `Nothing changed: ${target.identity} stays at revision ${revision}`
            : `Published ${target.identity} at revision ${revision}${turned}`,
        );
      },
    );
}
