import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMd } from '../../../test/fixtures/archives/make.js';
import { parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import { createLinkedHub, type LinkedHub } from './links-fixtures.js';
import { seedTeam, type Tokens } from './teams-fixtures.js';

/** `atskills link` against the hub listening on 127.0.0.1 and the GitHub stand-in. */
let t: LinkedHub;
let tokens: Tokens;
let url: string;
let home: string;

beforeAll(async () => {
  t = await createLinkedHub('links_cli');
  tokens = await seedTeam(t.hub.db.db, 'acme');
  await t.addRepo('acme-gh/handbook', {
    'skills/onboard/SKILL.md': skillMd('onboard', 'Onboard a new acme engineer.'),
    'skills/.atskills-link': 'hub:acme\n',
  });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  home = await mkdtemp(path.join(tmpdir(), 'links-cli-'));
});
afterAll(() => t?.close());

const atskills = (token: string, argv: string[], extra: Record<string, string> = {}, stdin?: string) =>
  runCliCaptured(argv, {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      ATSKILLS_CACHE: path.join(home, 'cache'),
      ATSKILLS_HUB: url,
      ATSKILLS_TOKEN: token,
      ...extra,
    },
    ...(stdin !== undefined ? { stdin } : {}),
  });

describe('atskills link', () => {
  it('links with a token read from the environment, never from the command line', async () => {
    const pat = t.github.issueToken(['acme-gh/handbook']);
    const result = await atskills(
      tokens.owner,
      [
        'link',
        'add',
        'acme-gh/handbook',
        '--to',
        'hub:acme/handbook',
        '--folder',
        'skills',
        '--token-env',
        'LINK_PAT',
        '--expires',
        '2027-03-01',
      ],
      { LINK_PAT: pat },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `hub:acme/handbook <- acme-gh/handbook/skills (private, a token ending in ${pat.slice(-4)}, expires 2027-03-01)`,
    );
    expect(result.stdout).toContain('status: indexed');
    expect(result.stdout + result.stderr).not.toContain(pat);
    const got = await atskills(tokens.reader, ['get', 'hub:acme/handbook/onboard']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toContain('Steps for onboard.');
  });

  it('lists, shows status to members, re-indexes and unlinks', async () => {
    const list = parseJsonOutput<{ links: { identity: string; status: string }[] }>(
      await atskills(tokens.owner, ['link', 'list', 'acme', '--json']),
    );
    expect(list.links.map((l) => [l.identity, l.status])).toEqual([['hub:acme/handbook', 'indexed']]);
    const denied = await atskills(tokens.reader, ['link', 'list', 'acme']);
    expect(denied.code).toBe(7);
    const status = await atskills(tokens.reader, ['link', 'status', 'hub:acme/handbook']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('status: indexed');
    expect((await atskills(tokens.owner, ['link', 'index', 'hub:acme/handbook'])).code).toBe(0);
    const usage = await atskills(tokens.owner, ['link', 'add', 'acme-gh/handbook', '--to', 'hub:acme/x']);
    expect(usage.code).toBe(2);
    const removed = await atskills(tokens.owner, ['link', 'remove', 'hub:acme/handbook']);
    expect(removed.stdout).toBe('Unlinked hub:acme/handbook.\n');
    // A member without a cached copy is told it is gone upstream.
    const gone = await atskills(tokens.reader, ['get', 'hub:acme/handbook/onboard'], {
      ATSKILLS_CACHE: path.join(home, 'fresh-cache'),
    });
    expect(gone.code).toBe(3);
  });

  it('links with the App (token on stdin is the other way) and reports a failure with exit 1', async () => {
    await t.addRepo('acme-gh/secret', { 'x/SKILL.md': skillMd('x', 'Secret.') });
    const result = await atskills(tokens.owner, [
      'link',
      'add',
      'acme-gh/secret',
      '--to',
      'hub:acme/secret',
      '--app',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('failure: link-not-authorized');
    const stdin = await atskills(
      tokens.owner,
      ['link', 'add', 'acme-gh/secret', '--to', 'hub:acme/other', '--token-stdin'],
      {},
      'github_pat_notreallyavalidtoken1234\n',
    );
    expect(stdin.code).toBe(2);
    expect(stdin.stderr).toContain('link-credential-refused');
    expect(stdin.stderr).not.toContain('notreallyavalidtoken');
  });
});
