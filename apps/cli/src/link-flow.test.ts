import { formatIdentity } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import {
  addLink,
  collectionOf,
  describeLink,
  linkCredential,
  linkReport,
  teamOf,
  type WaitClock,
  waitForIndex,
} from './link-flow.js';
import type { LinkAnswer, LinkHub, NewLink } from './link-hub.js';

/**
 * The hub's link routes held in memory: a new link (or a re-index request) is queued, and each status read
 * moves its index one step on (queued -> indexing -> the outcome), as the hub's index job does over time.
 */
class MemoryLinkHub implements LinkHub {
  links = new Map<string, LinkAnswer>();
  created: { team: string; link: NewLink }[] = [];
  reads = 0;

  constructor(private readonly outcome: Pick<LinkAnswer, 'status' | 'failure' | 'problems' | 'headCommit'>) {}

  async create(team: string, link: NewLink): Promise<LinkAnswer> {
    this.created.push({ team, link });
    const answer: LinkAnswer = {
      identity: formatIdentity('hub', `${team}/${link.collection}`),
      repository: link.repo,
      folder: link.folder ?? '',
      visibility: link.visibility,
      credential:
        link.credential.kind === 'app'
          ? { kind: 'app' }
          : {
              kind: 'token',
              last4: link.credential.token.slice(-4),
              expiresAt: link.credential.expiresAt ?? null,
            },
      status: 'queued',
      stale: false,
      failure: null,
      headCommit: null,
      problems: [],
    };
    this.links.set(`${team}/${link.collection}`, answer);
    return answer;
  }

  async list(team: string): Promise<LinkAnswer[]> {
    return [...this.links.entries()].filter(([key]) => key.startsWith(`${team}/`)).map(([, link]) => link);
  }

  async status(team: string, collection: string): Promise<LinkAnswer> {
    this.reads++;
    const link = this.links.get(`${team}/${collection}`);
    if (!link) throw new Error(`no link ${team}/${collection}`);
    const next: LinkAnswer =
      link.status === 'queued'
        ? { ...link, status: 'indexing' }
        : link.status === 'indexing'
          ? { ...link, ...this.outcome }
          : link;
    this.links.set(`${team}/${collection}`, next);
    return link;
  }

  async reindex(team: string, collection: string): Promise<void> {
    const link = this.links.get(`${team}/${collection}`);
    if (link) this.links.set(`${team}/${collection}`, { ...link, status: 'queued' });
  }

  async remove(team: string, collection: string): Promise<void> {
    this.links.delete(`${team}/${collection}`);
  }
}

const INDEXED = { status: 'indexed', failure: null, problems: [], headCommit: 'c'.repeat(40) };

/** Time that passes only when the wait sleeps, so a 60-second wait takes no real time. */
function virtualClock(): WaitClock & { slept: number[] } {
  let now = 1_000_000;
  const slept: number[] = [];
  return {
    pollMs: 500,
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

async function* chunks(...parts: string[]): AsyncIterable<string> {
  yield* parts;
}

describe('link targets', () => {
  it('takes a whole hub collection, and refuses a skill in one or another source', () => {
    expect(collectionOf('hub:acme/playbooks')).toEqual({
      team: 'acme',
      collection: 'playbooks',
      identity: 'hub:acme/playbooks',
    });
    expect(() => collectionOf('hub:acme/playbooks/deploy')).toThrow(
      expect.objectContaining({
        code: 'usage',
        message: expect.stringContaining('got hub:acme/playbooks/deploy'),
      }),
    );
    expect(() => collectionOf('gh:acme/playbooks')).toThrow(expect.objectContaining({ code: 'usage' }));
  });

  it('names a team with or without its hub: prefix', () => {
    expect(teamOf('hub:acme')).toBe('acme');
    expect(teamOf('acme')).toBe('acme');
  });
});

describe('linkCredential', () => {
  const none = { env: {} };

  it('wants exactly one credential', async () => {
    for (const opts of [{}, { app: true, tokenEnv: 'T' }, { tokenEnv: 'T', tokenStdin: true }])
      await expect(linkCredential(opts, none)).rejects.toMatchObject({
        code: 'usage',
        message: 'Give exactly one credential: --app, --token-env <variable> or --token-stdin.',
      });
  });

  it("uses the hub's App, or reads a token from the environment or stdin (trimmed), with its expiry", async () => {
    expect(await linkCredential({ app: true, expires: '2027-01-01' }, none)).toEqual({ kind: 'app' });
    expect(await linkCredential({ tokenEnv: 'T' }, { env: { T: ' github_pat_1 \n' } })).toEqual({
      kind: 'token',
      token: 'github_pat_1',
    });
    expect(
      await linkCredential(
        { tokenStdin: true, expires: '2027-01-31' },
        { env: {}, stdin: chunks('github_', 'pat_2\n') },
      ),
    ).toEqual({ kind: 'token', token: 'github_pat_2', expiresAt: '2027-01-31T00:00:00.000Z' });
  });

  it('refuses an empty token', async () => {
    await expect(linkCredential({ tokenEnv: 'T' }, { env: { T: '  ' } })).rejects.toMatchObject({
      code: 'usage',
      message: 'The environment variable T is empty.',
    });
    await expect(
      linkCredential({ tokenStdin: true }, { env: {}, stdin: chunks('\n') }),
    ).rejects.toMatchObject({
      code: 'usage',
      message: 'No token on standard input.',
    });
  });
});

describe('addLink and waitForIndex', () => {
  it('creates the link the options describe, then waits until its first index has run', async () => {
    const hub = new MemoryLinkHub(INDEXED);
    const { target, created } = await addLink(
      hub,
      'acme-gh/handbook',
      { to: 'hub:acme/handbook', folder: 'skills', tokenEnv: 'T' },
      { env: { T: 'github_pat_abcd' } },
    );
    expect(hub.created).toEqual([
      {
        team: 'acme',
        link: {
          repo: 'acme-gh/handbook',
          collection: 'handbook',
          folder: 'skills',
          visibility: 'private',
          credential: { kind: 'token', token: 'github_pat_abcd' },
        },
      },
    ]);
    expect(created.status).toBe('queued');

    const clock = virtualClock();
    const done = await waitForIndex(hub, target, 60, clock);
    expect(done).toMatchObject({ identity: 'hub:acme/handbook', status: 'indexed' });
    // queued, indexing, indexed: two pauses between three reads.
    expect(hub.reads).toBe(3);
    expect(clock.slept).toEqual([500, 500]);
  });

  it('creates nothing when the options are wrong', async () => {
    const hub = new MemoryLinkHub(INDEXED);
    await expect(addLink(hub, 'acme-gh/x', { to: 'hub:acme/x' }, { env: {} })).rejects.toMatchObject({
      code: 'usage',
    });
    await expect(
      addLink(hub, 'acme-gh/x', { to: 'hub:acme/x/deploy', app: true }, { env: {} }),
    ).rejects.toMatchObject({
      code: 'usage',
    });
    expect(hub.created).toEqual([]);
  });

  it('stops waiting at the deadline and answers the status it last read', async () => {
    const hub = new MemoryLinkHub(INDEXED);
    const { target } = await addLink(
      hub,
      'acme-gh/x',
      { to: 'hub:acme/x', public: true, app: true },
      { env: {} },
    );
    expect(hub.created[0]?.link).toMatchObject({ visibility: 'public', credential: { kind: 'app' } });
    const clock = virtualClock();
    // No time to wait: the read after the first pause is past the deadline, whatever it says.
    expect((await waitForIndex(hub, target, 0, clock)).status).toBe('indexing');
    expect(clock.slept).toEqual([500]);
    // Re-index: queued again, and followed to the end.
    await hub.reindex(target.team, target.collection);
    expect((await waitForIndex(hub, target, 60, virtualClock())).status).toBe('indexed');
  });
});

describe('describeLink', () => {
  it('says only "a token" to a member the hub does not show the token\'s last characters', () => {
    const lines = describeLink({
      identity: 'hub:acme/handbook',
      repository: 'acme-gh/handbook',
      visibility: 'private',
      status: 'indexed',
      credential: { kind: 'token', last4: '' },
      problems: [],
    } as unknown as Parameters<typeof describeLink>[0]);
    expect(lines[0]).toBe('hub:acme/handbook <- acme-gh/handbook (private, a token)');
  });
});

describe('linkReport', () => {
  it('describes an indexed link read with a token, and exits 0', async () => {
    const hub = new MemoryLinkHub(INDEXED);
    const { target } = await addLink(
      hub,
      'acme-gh/handbook',
      { to: 'hub:acme/handbook', folder: 'skills', tokenEnv: 'T', expires: '2027-03-01' },
      { env: { T: 'github_pat_wxyz' } },
    );
    const report = linkReport(await waitForIndex(hub, target, 60, virtualClock()));
    expect(report).toEqual({
      lines: [
        'hub:acme/handbook <- acme-gh/handbook/skills (private, a token ending in wxyz, expires 2027-03-01)',
        `  status: indexed at ${'c'.repeat(12)}`,
      ],
      exitCode: 0,
    });
  });

  it('names the failure and every problem of a failed index, stale for members, and exits 1', async () => {
    const hub = new MemoryLinkHub({
      status: 'failed',
      failure: { code: 'link-not-authorized', message: 'the App is not installed on acme-gh/secret' },
      problems: [{ path: 'skills/x/SKILL.md', code: 'no-frontmatter', message: 'no frontmatter' }],
      headCommit: null,
    });
    const { target } = await addLink(
      hub,
      'acme-gh/secret',
      { to: 'hub:acme/secret', app: true },
      { env: {} },
    );
    const failed = await waitForIndex(hub, target, 60, virtualClock());
    expect(linkReport({ ...failed, stale: true })).toEqual({
      lines: [
        'hub:acme/secret <- acme-gh/secret (private, the GitHub App)',
        '  status: failed (members read the last good revision, marked stale)',
        '  failure: link-not-authorized: the App is not installed on acme-gh/secret',
        '  problem: skills/x/SKILL.md: no-frontmatter: no frontmatter',
      ],
      exitCode: 1,
    });
  });
});
