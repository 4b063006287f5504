/**
 * The hub's operator command line: `npm run hub -- admin <command> ...` (also inside the container).
 * It talks to the database directly (DATABASE_URL, else the embedded database under ATSKILLS_DATA_DIR),
 * applies pending migrations first so it can bootstrap a brand-new hub, and acts as the operator.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  connectDatabase,
  type DatabaseHandle,
  databaseOptions,
  EmbeddedDatabaseBusy,
  migrate,
  readEmbeddedLock,
} from '@atskills/db';
import { TokenKeyring } from '@atskills/github-auth';
import { Command, CommanderError, Option } from 'commander';
import { type AppConfig, loadConfig } from './config.js';
import { isHttpProblem } from './problems.js';
import { forwardCli } from './runtime/admin-client.js';
import { describeStartupError } from './runtime/startup-errors.js';
import {
  type ActionContext,
  auditLogOf,
  createTeam,
  createToken,
  createUser,
  listAllUsers,
  OPERATOR,
  removeMember,
  revokeToken,
  setMember,
  teamMembers,
  userTokens,
} from './services/auth/accounts.js';
import { rotateLinkTokens } from './services/links/links.js';

/** Where the CLI writes, and what it runs against (tests pass their own). */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** A database handle the caller owns; otherwise the CLI connects from the environment. */
  database?: DatabaseHandle;
  now?: () => Date;
  env?: Record<string, string | undefined>;
}

/** Runs the CLI with `argv` (without `node cli.ts`); resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let handle = io.database;
  let owned = false;
  // Parsed once, when a command first needs it (`--help` needs none).
  let parsedConfig: AppConfig | undefined;
  const loadedConfig = () => (parsedConfig ??= loadConfig(io.env ?? process.env));
  // An embedded database belongs to one process: while a hub runs on it, the hub runs the command.
  if (!handle && argv[0] === 'admin' && !argv.includes('--help') && !argv.includes('-h')) {
    const config = loadedConfig();
    const owner = config.databaseUrl ? undefined : readEmbeddedLock(path.join(config.dataDir, 'db'));
    if (owner?.kind === 'hub' && owner.adminSocket) {
      const answer = await forwardCli(owner.adminSocket, argv);
      if (answer.stdout) io.stdout(answer.stdout);
      if (answer.stderr) io.stderr(answer.stderr);
      return answer.code;
    }
    if (owner) {
      io.stderr(`error: ${new EmbeddedDatabaseBusy(path.resolve(config.dataDir, 'db'), owner).message}\n`);
      return 1;
    }
  }
  const db = async () => {
    if (!handle) {
      const config = loadedConfig();
      handle = await connectDatabase(
        databaseOptions('cli', { url: config.databaseUrl, dataDir: config.dataDir }, { owner: 'cli' }),
      );
      owned = true;
      await migrate(handle);
    }
    return handle.db;
  };
  const ctx = (): ActionContext => ({ authority: OPERATOR, now: io.now?.() ?? new Date(), requestId: null });
  const print = (json: boolean, value: unknown, human: string) =>
    io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);

  const program = new Command('hub')
    .description('Operate an @skills hub')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  const admin = program.command('admin').description('Users, teams, members, tokens and the audit log');
  const json = () => new Option('--json', 'print JSON');

  admin
    .command('create-user')
    .argument('<name>', "user name (also the user's own namespace)")
    .option('--email <email>', 'contact address')
    .option('--admin', 'make the user a hub administrator', false)
    .addOption(json())
    .action(async (name: string, o: { email?: string; admin: boolean; json?: boolean }) => {
      const user = await createUser(await db(), { name, email: o.email ?? null, admin: o.admin }, ctx());
      print(!!o.json, user, `created user ${user.name}${user.admin ? ' (administrator)' : ''}`);
    });

  admin
    .command('list-users')
    .addOption(json())
    .action(async (o: { json?: boolean }) => {
      const users = await listAllUsers(await db(), ctx());
      print(
        !!o.json,
        users,
        users.map((u) => `${u.name}${u.admin ? ' (administrator)' : ''}`).join('\n') || '(no users)',
      );
    });

  admin
    .command('create-team')
    .argument('<name>', 'team name (its namespace)')
    .option('--owner <user>', 'first owner of the team')
    .addOption(json())
    .action(async (name: string, o: { owner?: string; json?: boolean }) => {
      const team = await createTeam(await db(), { name, owner: o.owner ?? null }, ctx());
      print(!!o.json, team, `created team ${team.name}${team.owner ? ` owned by ${team.owner}` : ''}`);
    });

  admin
    .command('add-member')
    .argument('<team>')
    .argument('<user>')
    .addOption(
      new Option('--role <role>', 'role in the team')
        .choices(['owner', 'publisher', 'reader'])
        .default('reader'),
    )
    .addOption(json())
    .action(async (team: string, user: string, o: { role: string; json?: boolean }) => {
      const m = await setMember(await db(), { team, user, role: o.role }, ctx());
      print(
        !!o.json,
        m,
        `${m.user} is ${m.role} of ${m.team}${m.previousRole ? ` (was ${m.previousRole})` : ''}`,
      );
    });

  admin
    .command('remove-member')
    .argument('<team>')
    .argument('<user>')
    .addOption(json())
    .action(async (team: string, user: string, o: { json?: boolean }) => {
      const m = await removeMember(await db(), { team, user }, ctx());
      print(!!o.json, m, `removed ${m.user} from ${m.team}`);
    });

  admin
    .command('list-members')
    .argument('<team>')
    .addOption(json())
    .action(async (team: string, o: { json?: boolean }) => {
      const members = await teamMembers(await db(), team, ctx());
      print(!!o.json, members, members.map((m) => `${m.user}\t${m.role}`).join('\n') || '(no members)');
    });

  admin
    .command('create-token')
    .argument('<user>')
    .option('--scopes <list>', 'comma-separated: read, publish, admin', 'read')
    .option('--label <text>', 'what the token is for', '')
    .option('--expires-in-days <days>', 'lifetime in days', '90')
    .option('--no-expiry', 'a token that never expires (service accounts)')
    .addOption(json())
    .action(
      async (
        user: string,
        o: { scopes: string; label: string; expiresInDays: string; expiry: boolean; json?: boolean },
      ) => {
        const days = o.expiry ? Number(o.expiresInDays) : null;
        const token = await createToken(
          await db(),
          {
            user,
            label: o.label,
            scopes: o.scopes
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
            expiresInDays: days,
          },
          ctx(),
        );
        if (!o.json)
          io.stderr(
            `token ${token.id} for ${token.user} (${token.scopes.join(', ')}), expires ${token.expiresAt ?? 'never'}; it is shown only now:\n`,
          );
        print(!!o.json, token, token.token);
      },
    );

  admin
    .command('list-tokens')
    .argument('<user>')
    .addOption(json())
    .action(async (user: string, o: { json?: boolean }) => {
      const tokens = await userTokens(await db(), user, ctx());
      const state = (t: (typeof tokens)[number]) =>
        t.revokedAt
          ? 'revoked'
          : t.expiresAt && t.expiresAt <= new Date().toISOString()
            ? 'expired'
            : 'active';
      print(
        !!o.json,
        tokens,
        tokens
          .map((t) => `${t.id}\t${t.prefix}...\t${t.scopes.join(',')}\t${state(t)}\t${t.label}`)
          .join('\n') || '(no tokens)',
      );
    });

  admin
    .command('revoke-token')
    .argument('<id>', 'token id (see list-tokens)')
    .addOption(json())
    .action(async (id: string, o: { json?: boolean }) => {
      if (!/^\d+$/.test(id))
        throw new CommanderError(2, 'hub.bad-id', `A token id is a number; got "${id}".`);
      const token = await revokeToken(await db(), Number(id), ctx());
      print(!!o.json, token, `revoked token ${token.id} (${token.prefix}...) of ${token.user}`);
    });

  admin
    .command('audit')
    .argument('<namespace>')
    .option('--limit <n>', 'entries to show', '50')
    .addOption(json())
    .action(async (namespace: string, o: { limit: string; json?: boolean }) => {
      const limit = Math.min(Math.max(Number.parseInt(o.limit, 10) || 50, 1), 1000);
      const entries = await auditLogOf(await db(), namespace, { limit }, ctx());
      print(
        !!o.json,
        entries,
        entries.map((e) => `${e.at}\t${e.actor}\t${e.action}\t${e.target}`).join('\n') || '(no entries)',
      );
    });

  admin
    .command('rotate-link-keys')
    .description('Re-seal every linked token with the first key of LINK_TOKEN_KEYS (then drop the old keys)')
    .addOption(json())
    .action(async (o: { json?: boolean }) => {
      const config = loadedConfig();
      const keyring = new TokenKeyring(config.github.auth.tokenKeys);
      const resealed = await rotateLinkTokens(await db(), keyring);
      print(
        !!o.json,
        { resealed, keyId: keyring.currentKeyId },
        `re-sealed ${resealed} token(s) with key ${keyring.currentKeyId}`,
      );
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0)
        return 0;
      if (err.code === 'hub.bad-id') io.stderr(`error: ${err.message}\n`);
      return err.exitCode || 2;
    }
    if (isHttpProblem(err)) {
      io.stderr(`error (${err.code}): ${err.detail ?? err.message}\n`);
      return 1;
    }
    if (err instanceof EmbeddedDatabaseBusy) {
      io.stderr(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    if (owned) await handle?.close();
  }
}

// Run when executed directly (`tsx apps/api/src/cli.ts ...`), not when imported by tests.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runCli(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
  }).then(
    (code) => process.exit(code),
    (err) => {
      // One line that says what went wrong, never a stack trace.
      console.error(`error: ${describeStartupError(err)}`);
      process.exit(1);
    },
  );
}
