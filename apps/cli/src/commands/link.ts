import { hubParts, parseIdentity, splitIdentityPrefix } from '@atskills/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import type { CliContext } from '../context.js';

/** A link as the hub shows it (the token never: its last four characters and expiry). */
const LinkAnswer = z.object({
  identity: z.string(),
  repository: z.string(),
  folder: z.string(),
  visibility: z.string(),
  credential: z.object({
    kind: z.enum(['app', 'token']),
    last4: z.string().optional(),
    expiresAt: z.string().nullable().optional(),
  }),
  status: z.string(),
  stale: z.boolean(),
  failure: z.object({ code: z.string(), message: z.string() }).nullable(),
  headCommit: z.string().nullable(),
  problems: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })),
});
type LinkAnswer = z.infer<typeof LinkAnswer>;

/** How long `link add` and `link index` wait for the index by default. */
const WAIT_SECONDS = 60;

/** `hub:<team>/<collection>` from the command line, or a usage error. */
async function collectionOf(text: string): Promise<{ team: string; collection: string; identity: string }> {
  const { ResolveError } = await import('@atskills/protocol/node');
  const target = parseIdentity(text);
  const parts = target.source === 'hub' ? hubParts(target) : undefined;
  if (parts?.subpath !== '') {
    throw new ResolveError(
      'usage',
      `Name a whole hub collection, like hub:acme/playbooks (got ${target.identity}).`,
    );
  }
  return { team: parts.namespace, collection: parts.collection, identity: target.identity };
}

function describeLink(link: LinkAnswer): string[] {
  const credential =
    link.credential.kind === 'app'
      ? 'the GitHub App'
      : `a token ending in ${link.credential.last4}${link.credential.expiresAt ? `, expires ${link.credential.expiresAt.slice(0, 10)}` : ''}`;
  const lines = [
    `${link.identity} <- ${link.repository}${link.folder ? `/${link.folder}` : ''} (${link.visibility}, ${credential})`,
    `  status: ${link.status}${link.stale ? ' (members read the last good revision, marked stale)' : ''}${link.headCommit ? ` at ${link.headCommit.slice(0, 12)}` : ''}`,
  ];
  if (link.failure) lines.push(`  failure: ${link.failure.code}: ${link.failure.message}`);
  for (const p of link.problems) lines.push(`  problem: ${p.path}: ${p.code}: ${p.message}`);
  return lines;
}

/** Reads a token without it ever being an argument (shell history, `ps`). */
async function readToken(
  ctx: CliContext,
  opts: { tokenEnv?: string; tokenStdin?: boolean },
): Promise<string> {
  const { ResolveError } = await import('@atskills/protocol/node');
  if (opts.tokenEnv) {
    const value = ctx.io.env[opts.tokenEnv]?.trim();
    if (!value) throw new ResolveError('usage', `The environment variable ${opts.tokenEnv} is empty.`);
    return value;
  }
  let text = '';
  for await (const chunk of ctx.io.stdin ?? []) text += chunk.toString();
  if (!text.trim()) throw new ResolveError('usage', 'No token on standard input.');
  return text.trim();
}

/**
 * `atskills link add|list|status|index|remove`: a team's collections kept in GitHub repositories (owners
 * link and unlink; members read the status). The hub indexes the repository and keeps it fresh on pushes.
 */
export function registerLink(program: Command, ctx: CliContext): void {
  const link = program
    .command('link')
    .description('Keep a team collection in a GitHub repository (private or public) instead of uploading it');

  const call = async (method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown) => {
    const [{ hubRequest }, { ResolveError }] = await Promise.all([
      import('../hub-client.js'),
      import('@atskills/protocol/node'),
    ]);
    const settings = await ctx.settings();
    if (!settings.hubToken) {
      throw new ResolveError(
        'no-access',
        'Linking needs a token: run `atskills login --hub <url>` (or set ATSKILLS_TOKEN).',
      );
    }
    return hubRequest(settings, method, route, {
      ...(body === undefined
        ? {}
        : { body: Buffer.from(JSON.stringify(body)), contentType: 'application/json' }),
    });
  };
  const route = (team: string, collection?: string) =>
    `/v1/teams/${encodeURIComponent(team)}/links${collection ? `/${encodeURIComponent(collection)}` : ''}`;

  /** Polls the link's status until its index has run (or the wait is over). */
  const waitForIndex = async (team: string, collection: string, seconds: number): Promise<LinkAnswer> => {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const answer = LinkAnswer.parse(await call('GET', route(team, collection)));
      if (!['queued', 'indexing'].includes(answer.status) || Date.now() > deadline) return answer;
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  const finish = (answer: LinkAnswer, json?: boolean) => {
    if (json) return ctx.json(answer);
    for (const line of describeLink(answer)) ctx.out(line);
    if (answer.status === 'failed') ctx.fail(1);
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
        const { ResolveError } = await import('@atskills/protocol/node');
        const target = await collectionOf(opts.to);
        const kinds = [opts.app, opts.tokenEnv !== undefined, opts.tokenStdin].filter(Boolean).length;
        if (kinds !== 1) {
          throw new ResolveError(
            'usage',
            'Give exactly one credential: --app, --token-env <variable> or --token-stdin.',
          );
        }
        const credential = opts.app
          ? { kind: 'app' }
          : {
              kind: 'token',
              token: await readToken(ctx, opts),
              ...(opts.expires ? { expiresAt: new Date(opts.expires).toISOString() } : {}),
            };
        const created = LinkAnswer.parse(
          await call('POST', route(target.team), {
            repo,
            collection: target.collection,
            ...(opts.folder ? { folder: opts.folder } : {}),
            visibility: opts.public ? 'public' : 'private',
            credential,
          }),
        );
        ctx.err(`Linked ${created.identity} to ${created.repository}; indexing...`);
        finish(await waitForIndex(target.team, target.collection, Number(opts.wait) || 0), opts.json);
      },
    );

  link
    .command('list')
    .description("A team's linked repositories and the status of each (team owners)")
    .argument('<team>', 'the team (hub:<team> or just its name)')
    .option('--json', 'print the links as JSON')
    .action(async (team: string, opts: { json?: boolean }) => {
      const { source, rest } = splitIdentityPrefix(team);
      const name = source === 'hub' ? rest : team;
      const answer = z.object({ links: z.array(LinkAnswer) }).parse(await call('GET', route(name)));
      if (opts.json) return ctx.json(answer);
      if (answer.links.length === 0) ctx.out(`hub:${name} has no linked repositories.`);
      for (const l of answer.links) for (const line of describeLink(l)) ctx.out(line);
    });

  link
    .command('status')
    .description("A linked collection's index status and problems (team members)")
    .argument('<identity>', 'hub:<team>/<collection>')
    .option('--json', 'print the link as JSON')
    .action(async (identity: string, opts: { json?: boolean }) => {
      const target = await collectionOf(identity);
      finish(LinkAnswer.parse(await call('GET', route(target.team, target.collection))), opts.json);
    });

  link
    .command('index')
    .description('Index a linked repository again now (team owners)')
    .argument('<identity>', 'hub:<team>/<collection>')
    .option('--wait <seconds>', 'wait this long for the index', String(WAIT_SECONDS))
    .option('--json', 'print the link as JSON')
    .action(async (identity: string, opts: { wait: string; json?: boolean }) => {
      const target = await collectionOf(identity);
      await call('POST', `${route(target.team, target.collection)}/index`);
      finish(await waitForIndex(target.team, target.collection, Number(opts.wait) || 0), opts.json);
    });

  link
    .command('remove')
    .description('Unlink: the collection answers 410 to members and the stored token is erased (team owners)')
    .argument('<identity>', 'hub:<team>/<collection>')
    .action(async (identity: string) => {
      const target = await collectionOf(identity);
      await call('DELETE', route(target.team, target.collection));
      ctx.out(`Unlinked ${target.identity}.`);
    });
}
