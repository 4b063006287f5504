import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import type { LinkAnswer, LinkHub } from '../link-hub.js';

/** How long `link add` and `link index` wait for the index by default. */
const WAIT_SECONDS = 60;

/** The link flows and the hub's link routes over HTTP, loaded when a link command runs. */
async function linkModules(ctx: CliContext) {
  const [flow, { httpLinkHub }] = await Promise.all([import('../link-flow.js'), import('../link-hub.js')]);
  const hub: LinkHub = httpLinkHub(() => ctx.settings());
  return { ...flow, hub };
}
type LinkModules = Awaited<ReturnType<typeof linkModules>>;

/**
 * `atskills link add|list|status|index|remove`: a team's collections kept in GitHub repositories (owners
 * link and unlink; members read the status). The hub indexes the repository and keeps it fresh on pushes.
 */
export function registerLink(program: Command, ctx: CliContext): void {
  const link = program
    .command('link')
    .description('Keep a team collection in a GitHub repository (private or public) instead of uploading it');

  /** A link's status: as JSON, or its lines for people (exit 1 when its index failed). */
  const finish = ({ linkReport }: LinkModules, answer: LinkAnswer, json?: boolean) => {
    if (json) return ctx.json(answer);
    const report = linkReport(answer);
    for (const line of report.lines) ctx.out(line);
    if (report.exitCode !== 0) ctx.fail(report.exitCode);
  };

  link
    .command('add')
    .description('Link a repository (or a folder in it) to hub:<team>/<collection> (team owners)')
    .argument('<repo>', 'the GitHub repository, owner/name')
    .requiredOption('--to <identity>', 'hub:<team>/<collection>')
    .option('--folder <path>', 'a folder inside the repository that holds the skills')
    .option('--public', 'readable by everyone (default: members of the team only)')
    .option('--app', "use the hub's GitHub App (installed on the repository by its owners)")
    .option('--token-env <variable>', 'read a fine-grained token from this environment variable')
    .option('--token-stdin', 'read a fine-grained token from standard input')
    .option('--expires <date>', "the token's expiry (YYYY-MM-DD), shown to the team's owners")
    .option('--wait <seconds>', 'wait this long for the first index', String(WAIT_SECONDS))
    .option('--json', 'print the link as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  GITHUB_LINK_TOKEN=github_pat_... atskills link add acme/playbooks --to hub:acme/playbooks --token-env GITHUB_LINK_TOKEN\n' +
        '  atskills link add acme/handbook --folder skills --to hub:acme/handbook --app\n' +
        '    (the App must be installed on acme/handbook, and skills/.atskills-link must hold the line hub:acme)',
    )
    .action(
      async (
        repo: string,
        opts: {
          to: string;
          folder?: string;
          public?: boolean;
          app?: boolean;
          tokenEnv?: string;
          tokenStdin?: boolean;
          expires?: string;
          wait: string;
          json?: boolean;
        },
      ) => {
        const m = await linkModules(ctx);
        const { target, created } = await m.addLink(m.hub, repo, opts, ctx.io);
        ctx.err(`Linked ${created.identity} to ${created.repository}; indexing...`);
        finish(m, await m.waitForIndex(m.hub, target, Number(opts.wait) || 0), opts.json);
      },
    );

  link
    .command('list')
    .description("A team's linked repositories and the status of each (team owners)")
    .argument('<team>', 'the team (hub:<team> or just its name)')
    .option('--json', 'print the links as JSON')
    .action(async (team: string, opts: { json?: boolean }) => {
      const { teamOf, describeLink, hub } = await linkModules(ctx);
      const name = teamOf(team);
      const links = await hub.list(name);
      if (opts.json) return ctx.json({ links });
      if (links.length === 0) ctx.out(`hub:${name} has no linked repositories.`);
      for (const l of links) for (const line of describeLink(l)) ctx.out(line);
    });

  link
    .command('status')
    .description("A linked collection's index status and problems (team members)")
    .argument('<identity>', 'hub:<team>/<collection>')
    .option('--json', 'print the link as JSON')
    .action(async (identity: string, opts: { json?: boolean }) => {
      const m = await linkModules(ctx);
      const target = m.collectionOf(identity);
      finish(m, await m.hub.status(target.team, target.collection), opts.json);
    });

  link
    .command('index')
    .description('Index a linked repository again now (team owners)')
    .argument('<identity>', 'hub:<team>/<collection>')
    .option('--wait <seconds>', 'wait this long for the index', String(WAIT_SECONDS))
    .option('--json', 'print the link as JSON')
    .action(async (identity: string, opts: { wait: string; json?: boolean }) => {
      const m = await linkModules(ctx);
      const target = m.collectionOf(identity);
      await m.hub.reindex(target.team, target.collection);
      finish(m, await m.waitForIndex(m.hub, target, Number(opts.wait) || 0), opts.json);
    });

  link
    .command('remove')
    .description('Unlink: the collection answers 410 to members and the stored token is erased (team owners)')
    .argument('<identity>', 'hub:<team>/<collection>')
    .action(async (identity: string) => {
      const { collectionOf, hub } = await linkModules(ctx);
      const target = collectionOf(identity);
      await hub.remove(target.team, target.collection);
      ctx.out(`Unlinked ${target.identity}.`);
    });
}
