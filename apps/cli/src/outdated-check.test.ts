import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  diskPath,
  formatSourceStamp,
  ghParts,
  type Identity,
  parseIdentity,
  type ResolveRequest,
  type ResolveResponseItem,
} from '@atskills/protocol';
import { type CacheEntryMeta, ResolveError } from '@atskills/protocol/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from './exit-codes.js';
import { checkOutdated, type OutdatedSources, outdatedExitCode } from './outdated-check.js';

const SHA_A = 'a'.repeat(40);
const SHA_B = 'b'.repeat(40);
const TREE_A = '1'.repeat(40);
const TREE_B = '2'.repeat(40);

/** What the hub holds of one identity. */
type HubState =
  | { kind: 'skill' | 'menu'; revision: string }
  | { gone: true; lastRevision: string; lastSeen: string }
  | { moved: string };

/**
 * Upstream held in memory: the hub answers `POST /v1/resolve` as SPEC 2 says (unchanged when the revision
 * sent is the current one, else changed; gone, moved, and not-found for what it does not hold), git
 * answers the head commit of the repositories it holds, and the cache holds what a resolve left.
 */
class MemoryUpstream implements OutdatedSources {
  hub = new Map<string, HubState>();
  heads = new Map<string, string>();
  cache = new Map<string, CacheEntryMeta>();
  /** Set: the hub cannot be reached. */
  hubDown?: string;
  batches: ResolveRequest['items'][] = [];
  gitProbes: string[] = [];

  async cached(identity: string): Promise<CacheEntryMeta | undefined> {
    return this.cache.get(identity);
  }

  async resolve(items: ResolveRequest['items']): Promise<ResolveResponseItem[]> {
    if (this.hubDown) throw new ResolveError('offline', this.hubDown);
    this.batches.push(items);
    return items.map(({ identity, revision }): ResolveResponseItem => {
      const state = this.hub.get(identity);
      if (!state) return { identity, status: 'not-found' };
      if ('gone' in state)
        return { identity, status: 'gone', lastRevision: state.lastRevision, lastSeen: state.lastSeen };
      if ('moved' in state) return { identity, status: 'moved', location: state.moved };
      return revision === state.revision
        ? { identity, status: 'unchanged', revision }
        : { identity, status: 'changed', revision: state.revision, kind: state.kind };
    });
  }

  async headCommit(id: Identity): Promise<string> {
    const { owner, repo } = ghParts(id);
    this.gitProbes.push(id.identity);
    const head = this.heads.get(`${owner}/${repo}`);
    if (!head) throw new ResolveError('not-found', `${id.identity}: no repository ${owner}/${repo}`);
    return head;
  }

  /** A cache entry as a resolve of a gh: skill (or menu) at `revision` leaves it. */
  remember(identity: string, meta: Partial<CacheEntryMeta> & Pick<CacheEntryMeta, 'revision'>): void {
    const id = parseIdentity(identity);
    this.cache.set(identity, {
      version: 1,
      identity,
      source: id.source === 'hub' ? 'hub' : 'gh',
      kind: 'skill',
      fetchedAt: '2026-11-30T00:00:00.000Z',
      checkedAt: '2026-11-30T00:00:00.000Z',
      ...meta,
    });
  }
}

let project: string;
let upstream: MemoryUpstream;

beforeEach(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'atskills-outdated-'));
  await mkdir(path.join(project, '.atskills'), { recursive: true });
  upstream = new MemoryUpstream();
});
afterEach(async () => {
  await rm(project, { recursive: true, force: true });
});

/** A saved copy in the project, stamped with `revision` (and its SKILL.md, edited or not). */
async function save(identity: string, revision: string, body = 'body\n'): Promise<void> {
  const dir = path.join(project, diskPath(parseIdentity(identity)));
  await mkdir(dir, { recursive: true });
  const name = identity.split('/').at(-1);
  await writeFile(path.join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: D.\n---\n${body}`);
  await writeFile(path.join(dir, '.source'), formatSourceStamp({ identity, date: '2026-11-30', revision }));
}

async function autotrigger(text: string): Promise<void> {
  await writeFile(path.join(project, '.atskills', '.autotrigger'), text);
}

describe('checkOutdated', () => {
  it('finds nothing to check in a project with nothing from the cloud', async () => {
    const report = await checkOutdated(project, upstream);
    expect(report).toEqual({ rows: [], outdated: 0, unchecked: 0 });
    expect(outdatedExitCode(report)).toBe(EXIT.ok);
    expect(upstream.batches).toEqual([]);
  });

  it('tells up to date, outdated, gone, moved and not-found hub: copies apart, in one resolve', async () => {
    await save('hub:acme/kit/current', 'r1');
    await save('hub:acme/kit/changed', 'r1');
    await save('hub:acme/kit/gone', 'r1');
    await save('hub:acme/kit/moved', 'r1');
    await save('hub:acme/kit/missing', 'r1');
    await autotrigger('@hub:acme/kit/current\n');
    upstream.hub.set('hub:acme/kit/current', { kind: 'skill', revision: 'r1' });
    upstream.hub.set('hub:acme/kit/changed', { kind: 'skill', revision: 'r2' });
    upstream.hub.set('hub:acme/kit/gone', {
      gone: true,
      lastRevision: 'r1',
      lastSeen: '2026-11-01T10:00:00Z',
    });
    upstream.hub.set('hub:acme/kit/moved', { moved: 'hub:acme/tools/moved' });

    const report = await checkOutdated(project, upstream);
    expect(upstream.batches).toHaveLength(1);
    expect(new Map(report.rows.map((r) => [r.identity, r]))).toEqual(
      new Map([
        [
          'hub:acme/kit/changed',
          {
            identity: 'hub:acme/kit/changed',
            kind: 'saved',
            installed: false,
            held: 'r1',
            via: 'hub',
            status: 'outdated',
            latest: 'r2',
          },
        ],
        [
          'hub:acme/kit/current',
          {
            identity: 'hub:acme/kit/current',
            kind: 'saved',
            installed: true,
            held: 'r1',
            via: 'hub',
            status: 'up-to-date',
            latest: 'r1',
          },
        ],
        [
          'hub:acme/kit/gone',
          {
            identity: 'hub:acme/kit/gone',
            kind: 'saved',
            installed: false,
            held: 'r1',
            via: 'hub',
            status: 'gone',
            latest: 'r1',
            detail: 'gone upstream, last seen 2026-11-01',
          },
        ],
        [
          'hub:acme/kit/missing',
          {
            identity: 'hub:acme/kit/missing',
            kind: 'saved',
            installed: false,
            held: 'r1',
            via: 'hub',
            status: 'not-found',
            detail: 'the hub knows no such skill (or it is private to others)',
          },
        ],
        [
          'hub:acme/kit/moved',
          {
            identity: 'hub:acme/kit/moved',
            kind: 'saved',
            installed: false,
            held: 'r1',
            via: 'hub',
            status: 'moved',
            detail: 'the repository moved: now hub:acme/tools/moved',
          },
        ],
      ]),
    );
    // Outdated, gone, moved and not-found all need doing something about.
    expect(report.outdated).toBe(4);
    expect(outdatedExitCode(report)).toBe(EXIT.outdated);
  });

  it('judges a locally edited copy by its stamp only (outdated reads no files; update finds the edit)', async () => {
    await save('hub:acme/kit/edited', 'r1', 'my own change\n');
    upstream.hub.set('hub:acme/kit/edited', { kind: 'skill', revision: 'r1' });
    const report = await checkOutdated(project, upstream);
    expect(report.rows.map((r) => [r.identity, r.status])).toEqual([['hub:acme/kit/edited', 'up-to-date']]);
    expect(outdatedExitCode(report)).toBe(EXIT.ok);
  });

  it('asks the hub about gh: copies by the folder tree the cache remembers, showing the trees', async () => {
    await save('gh:octo/kit/skills/a', SHA_A);
    // The cache has moved on to a newer commit since; the saved commit's tree is its `previous`.
    upstream.remember('gh:octo/kit/skills/a', {
      revision: SHA_B,
      contentKey: TREE_B,
      previous: { revision: SHA_A, contentKey: TREE_A },
    });
    upstream.hub.set('gh:octo/kit/skills/a', { kind: 'skill', revision: TREE_B });
    const report = await checkOutdated(project, upstream);
    expect(upstream.batches).toEqual([[{ identity: 'gh:octo/kit/skills/a', revision: TREE_A }]]);
    expect(report.rows).toEqual([
      {
        identity: 'gh:octo/kit/skills/a',
        kind: 'saved',
        installed: false,
        held: TREE_A,
        via: 'hub',
        status: 'outdated',
        latest: TREE_B,
      },
    ]);
    expect(upstream.gitProbes).toEqual([]);
  });

  it('asks git for gh: copies the hub does not hold: same head, new commits, missing repository', async () => {
    await save('gh:octo/kit/skills/a', SHA_A);
    await save('gh:octo/moving/skills/b', SHA_A);
    await save('gh:octo/deleted/skills/c', SHA_A);
    upstream.heads.set('octo/kit', SHA_A);
    upstream.heads.set('octo/moving', SHA_B);

    const report = await checkOutdated(project, upstream);
    expect(upstream.gitProbes.sort()).toEqual([
      'gh:octo/deleted/skills/c',
      'gh:octo/kit/skills/a',
      'gh:octo/moving/skills/b',
    ]);
    const byId = new Map(report.rows.map((r) => [r.identity, r]));
    expect(byId.get('gh:octo/kit/skills/a')).toEqual({
      identity: 'gh:octo/kit/skills/a',
      kind: 'saved',
      installed: false,
      held: SHA_A,
      via: 'git',
      status: 'up-to-date',
      latest: SHA_A,
    });
    expect(byId.get('gh:octo/moving/skills/b')).toMatchObject({
      via: 'git',
      status: 'outdated',
      held: SHA_A,
      latest: SHA_B,
      detail: 'the repository has new commits (the skill folder may be unchanged; update compares it)',
    });
    expect(byId.get('gh:octo/deleted/skills/c')).toMatchObject({
      via: 'git',
      status: 'not-found',
      detail: 'gh:octo/deleted/skills/c: no repository octo/deleted',
    });
    expect(report.outdated).toBe(2);
  });

  it('marks hub: skills unknown when the hub is down, still checks gh: over git, and exits 4', async () => {
    await save('hub:acme/kit/a', 'r1');
    await save('gh:octo/kit/skills/a', SHA_A);
    upstream.heads.set('octo/kit', SHA_A);
    upstream.hubDown = 'The hub at http://127.0.0.1:9 cannot be reached (ECONNREFUSED).';
    const report = await checkOutdated(project, upstream);
    expect(report.rows.map((r) => [r.identity, r.via, r.status, r.detail])).toEqual([
      ['gh:octo/kit/skills/a', 'git', 'up-to-date', undefined],
      ['hub:acme/kit/a', 'hub', 'unknown', upstream.hubDown],
    ]);
    expect(report).toMatchObject({ outdated: 0, unchecked: 1 });
    expect(outdatedExitCode(report)).toBe(EXIT.unreachable);
  });

  it('checks installed lines by what the cache holds, and names lines that select nothing', async () => {
    await autotrigger('@hub:acme/kit/cached\n@hub:acme/kit/never\n@gh:octo/kit/skills\n/nothing-here\n');
    upstream.remember('hub:acme/kit/cached', { revision: 'r1' });
    upstream.remember('gh:octo/kit/skills', { revision: SHA_A, kind: 'menu' });
    upstream.hub.set('hub:acme/kit/cached', { kind: 'skill', revision: 'r1' });
    upstream.hub.set('hub:acme/kit/never', { kind: 'skill', revision: 'r3' });

    const report = await checkOutdated(project, upstream);
    expect(report.rows).toEqual([
      {
        identity: '/nothing-here',
        kind: 'installed',
        installed: true,
        via: 'git',
        status: 'no-match',
        detail: expect.stringMatching(/^line 4 of \.atskills\/\.autotrigger: .*selects no skill/),
      },
      {
        identity: 'hub:acme/kit/cached',
        kind: 'installed',
        installed: true,
        held: 'r1',
        via: 'hub',
        status: 'up-to-date',
        latest: 'r1',
      },
      {
        identity: 'hub:acme/kit/never',
        kind: 'installed',
        installed: true,
        via: 'hub',
        status: 'not-cached',
        latest: 'r3',
      },
      {
        // A folder followed without its slash loads nothing (the cache knows it is a menu).
        identity: 'gh:octo/kit/skills',
        kind: 'installed',
        installed: true,
        via: 'hub',
        status: 'no-match',
        detail:
          'a folder of skills: the line loads nothing; write "@gh:octo/kit/skills/" (with the slash) to follow every skill in it',
      },
    ]);
    expect(report.outdated).toBe(2);
  });

  it('asks the hub 128 identities at a time', async () => {
    const lines = Array.from({ length: 130 }, (_, i) => `@hub:acme/kit/s${i}`);
    await autotrigger(`${lines.join('\n')}\n`);
    for (let i = 0; i < 130; i++) upstream.hub.set(`hub:acme/kit/s${i}`, { kind: 'skill', revision: 'r1' });
    const report = await checkOutdated(project, upstream);
    expect(upstream.batches.map((b) => b.length)).toEqual([128, 2]);
    expect(report.rows).toHaveLength(130);
    expect(new Set(report.rows.map((r) => r.status))).toEqual(new Set(['not-cached']));
  });
});
