/**
 * No trace of a private collection in what an outsider is answered (SPEC 2.3, 2.7): not its skills, and
 * not its words through the statistics search and suggestions are computed with (a word only a private
 * skill holds moved a suggestion's task prior and scores, and was not reported as ignored by search). Two
 * hubs hold the same public skills, one also a team's private collection: an outsider's answers are equal,
 * byte for byte, while the team's members are answered over their own skills too.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedRepository, skillMd } from './support/seed.js';
import { auth, seedTeam, type Tokens } from './teams-fixtures.js';

const PUBLIC_SKILLS = {
  'log-triage/SKILL.md': skillMd(
    'log-triage',
    'Triage application logs: find the errors, group them and point at the likely root cause',
  ),
  'pr-review/SKILL.md': skillMd('pr-review', 'Review a pull request for bugs, style and missing tests'),
  'release-notes/SKILL.md': skillMd('release-notes', 'Write release notes from the git commits since a tag'),
  'telemetry-dashboards/SKILL.md': skillMd(
    'telemetry-dashboards',
    'Build telemetry dashboards for a service: metrics, alerts and traces',
  ),
};

const PRIVATE_SKILLS = {
  'zorblax-calibration/SKILL.md': skillMd(
    'zorblax-calibration',
    'Calibrate the zorblax quokka flux capacitor inside the marsupial telemetry rig from the nightly wombat logs',
  ),
};

/** Messages an outsider might probe with: the private skill's words, alone and beside public ones. */
const PROBES = [
  'zorblax quokka wombat marsupial logs',
  'triage the marsupial logs',
  'triage the koala logs',
  'calibrate the flux capacitor from the telemetry logs',
  'review my pull request',
  'zorblx quoka',
];

describe('private collections in the statistics', () => {
  let withPrivate: TestHub;
  let without: TestHub;
  let tokens: Tokens;

  const suggest = (hub: TestHub, message: string, headers: Record<string, string> = {}) =>
    hub.app.inject({ method: 'POST', url: '/v1/suggest', headers, payload: { message, limit: 10 } });
  const search = (hub: TestHub, q: string, headers: Record<string, string> = {}) =>
    hub.app.inject({ url: `/v1/search?q=${encodeURIComponent(q)}&limit=20`, headers });

  beforeAll(async () => {
    [withPrivate, without] = await Promise.all([
      createTestHub('private_statistics', { SEARCH_ENGINE: 'memory' }),
      createTestHub('public_statistics', { SEARCH_ENGINE: 'memory' }),
    ]);
    tokens = await seedTeam(withPrivate.db.db, 'acme');
    for (const hub of [withPrivate, without]) {
      await seedRepository(hub.db.db, 'devtools', 'skills', PUBLIC_SKILLS);
    }
    await seedHubCollection(withPrivate.db.db, 'acme', 'vault', PRIVATE_SKILLS, { visibility: 'private' });
    for (const hub of [withPrivate, without]) {
      await hub.app.ready();
      // Until its first build ends a hub's search is answered by Postgres, with other statistics.
      await hub.app.searchIndexFirstBuild;
      // A build of its own over every skill: the hub's first build may have started before the seeding ended,
      // and what it learnt (related terms, the LSA model) is learnt again only after many changes.
      await hub.app.suggestEngine.firstBuild();
      await hub.app.suggestEngine.build();
    }
    // Both search indexes hold every skill before any probe: each follows the change feed on its own, and a
    // hub still catching up ignores words the other already counts.
    const holds = async (
      hub: TestHub,
      query: string,
      identity: string,
      headers: Record<string, string> = {},
    ) =>
      (await search(hub, query, headers))
        .json()
        .results.some((r: { identity: string }) => r.identity === identity);
    for (const hub of [withPrivate, without]) {
      for (const name of Object.keys(PUBLIC_SKILLS).map((path) => path.split('/')[0]!)) {
        await eventually(() => holds(hub, name.replace('-', ' '), `gh:devtools/skills/${name}`));
      }
    }
    await eventually(() =>
      holds(withPrivate, 'zorblax', 'hub:acme/vault/zorblax-calibration', auth(tokens, 'reader')),
    );
  }, 120_000);
  afterAll(async () => Promise.all([withPrivate?.close(), without?.close()]));

  it('answers an outsider exactly as a hub without the private collection', async () => {
    for (const message of PROBES) {
      for (const headers of [{}, auth(tokens, 'outsider')]) {
        const a = await suggest(withPrivate, message, headers);
        const b = await suggest(without, message, {});
        expect(a.statusCode).toBe(200);
        expect(a.json(), message).toEqual(b.json());
        const s = await search(withPrivate, message, headers);
        const t = await search(without, message, {});
        expect(s.json(), message).toEqual(t.json());
      }
    }
  });

  it("answers the team's members over their private skills too", async () => {
    const answer = (await suggest(withPrivate, PROBES[0]!, auth(tokens, 'reader'))).json();
    expect(answer.abstained).toBe(false);
    expect(answer.results[0].identity).toBe('hub:acme/vault/zorblax-calibration');
    const found = (await search(withPrivate, 'zorblax', auth(tokens, 'reader'))).json();
    expect(found.ignored ?? []).not.toContain('zorblax');
    const outsider = (await search(withPrivate, 'zorblax', auth(tokens, 'outsider'))).json();
    expect(outsider.results).toEqual([]);
    expect(outsider.ignored).toContain('zorblax');
  });

  it("counts a collection made public in everyone's statistics, and answers none of it once private again", async () => {
    // What re-publishing the same content with another visibility writes (setCollectionVisibility and
    // setLiveCollectionSkillsVisibility, in one transaction).
    const setVisibility = (visibility: string) =>
      withPrivate.db.db.transaction(async (tx) => {
        const vault = sql`(SELECT c.id FROM collections c JOIN namespaces n ON n.id = c.namespace_id WHERE n.name = 'acme' AND c.name = 'vault')`;
        await tx.execute(sql`UPDATE collections SET visibility = ${visibility} WHERE id = ${vault}`);
        await tx.execute(sql`UPDATE skills SET visibility = ${visibility} WHERE collection_id = ${vault}`);
      });
    await setVisibility('public');
    await eventually(async () =>
      (await search(withPrivate, 'zorblax'))
        .json()
        .results.some((r: { identity: string }) => r.identity === 'hub:acme/vault/zorblax-calibration'),
    );
    expect((await search(withPrivate, 'zorblax')).json().ignored ?? []).not.toContain('zorblax');
    await setVisibility('private');
    await eventually(async () => (await search(withPrivate, 'zorblax')).json().results.length === 0);
    // The suggestion model follows the change feed on its own (a write through the hub marks both at once;
    // this one went straight to the database): caught up before it is asked.
    await withPrivate.app.suggestEngine.sync();
    // What it held while public stays in the statistics as a removed skill's does, until the next build
    // (docs/teams.md); its skills are never answered to an outsider again.
    const identities = (body: { results: { identity: string }[] }) => body.results.map((r) => r.identity);
    for (const message of PROBES) {
      expect(identities((await search(withPrivate, message)).json())).not.toContain(
        'hub:acme/vault/zorblax-calibration',
      );
      expect(identities((await suggest(withPrivate, message)).json())).not.toContain(
        'hub:acme/vault/zorblax-calibration',
      );
    }
  });
});

describe("a hub of one team's private skills alone", () => {
  let hub: TestHub;
  let tokens: Tokens;
  beforeAll(async () => {
    hub = await createTestHub('team_only_statistics', { SEARCH_ENGINE: 'memory' });
    tokens = await seedTeam(hub.db.db, 'acme');
    await seedHubCollection(
      hub.db.db,
      'acme',
      'ops',
      { ...PUBLIC_SKILLS, ...PRIVATE_SKILLS },
      {
        visibility: 'private',
      },
    );
    await hub.app.ready();
    await hub.app.suggestEngine.firstBuild();
    await hub.app.suggestEngine.build();
  }, 60_000);
  afterAll(async () => hub?.close());

  it("learns from the team's skills, and forgets it once another team's arrive", async () => {
    // No outsider reads any skill here: the related terms and the LSA model are the team's own.
    const learnt = hub.app.suggestEngine.status();
    expect(learnt.documents).toBe(5);
    const answer = (
      await hub.app.inject({
        method: 'POST',
        url: '/v1/suggest',
        headers: auth(tokens, 'reader'),
        payload: { message: 'triage the application logs and find the root cause' },
      })
    ).json();
    expect(answer.results[0].identity).toBe('hub:acme/ops/log-triage');
    // A second team's private collection: what was learnt from acme's skills must reach none of its members.
    await seedTeam(hub.db.db, 'beta');
    await seedHubCollection(hub.db.db, 'beta', 'tools', PUBLIC_SKILLS, { visibility: 'private' });
    await hub.app.suggestEngine.sync();
    const after = hub.app.suggestEngine.status();
    expect(after).toMatchObject({ relatedPairs: 0, documents: 9 });
    // The LSA model fitted again, on the skills everyone reads: none (no term vectors left).
    expect(after.denseBytes).toBeLessThan(learnt.denseBytes);
  });
});
