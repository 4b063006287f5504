/**
 * Issue 24, findings 9, 11 (REST) and 12: an accepted "malicious" verdict is keyed by the skill's content
 * (it survives re-publishing, holds for every revision with that content, and shows on `?rev=` of the judged
 * revision); the report limit holds under 25 parallel requests; a NUL or control character in a JSON
 * string is a 400 problem that names the field, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { MAX_REPORTS_PER_HOUR } from '../src/services/safety-reports.js';
import { createTestHub, type TestHub } from './support/app.js';
import {
  acceptedReport,
  auth,
  type Caller,
  callAs,
  publish,
  seedTeam,
  type Tokens,
} from './teams-fixtures.js';

let hub: TestHub;
let tokens: Tokens;
const SKILL = 'hub:acme/tools/helper';
/** The collection: the judged skill at `version`, beside another skill at `other`. */
const helper = (version: string, other: string) =>
  packCollection({
    'helper/SKILL.md': skillMd('helper', 'Help with the toolchain.', `# Helper ${version}\n\nSteps.\n`),
    'other/SKILL.md': skillMd('other', 'Another skill.', `# Other ${other}\n`),
  });

const call = (caller: Caller, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  callAs(hub.app, tokens, caller, method, url, payload);

const flagsOf = async (url: string) => {
  const res = await call('anonymous', 'GET', url);
  expect(res.statusCode, res.body).toBe(200);
  return {
    revision: res.json().revision as string,
    header: String(res.headers['x-skill-flags'] ?? ''),
    codes: (res.json().flags as { code: string }[]).map((f) => f.code),
  };
};

let others = 0;
/** Publishes the collection again with the judged skill at `version` and the other skill changed. */
const republish = async (version: string) => {
  others++;
  const res = await publish(
    hub.app,
    'acme/tools',
    helper(version, `v${others}`),
    auth(tokens, 'publisher'),
    'public',
  );
  expect(res.statusCode, res.body).toBe(200);
};

beforeAll(async () => {
  hub = await createTestHub('report_trust');
  tokens = await seedTeam(hub.db.db, 'acme');
  await republish('v1');
});
afterAll(() => hub?.close());

describe('a "malicious" verdict is keyed by content', () => {
  let judged: string;

  it('holds through a re-publish that leaves the skill byte-identical', async () => {
    judged = (await flagsOf(`/v1/skills/${SKILL}`)).revision;
    await acceptedReport(hub.app, tokens, SKILL, 'reader', {
      kind: 'malicious',
      note: 'Exfiltrates credentials.',
    });
    expect((await flagsOf(`/v1/skills/${SKILL}`)).header).toContain('reported-malicious');

    await republish('v1');
    const after = await flagsOf(`/v1/skills/${SKILL}`);
    expect(after.header).toContain('reported-malicious');
    expect(after.codes).toContain('reported-malicious');
  });

  it('shows in the batch answer (POST /v1/resolve), unchanged and changed, twice for the read cache', async () => {
    const current = (await flagsOf(`/v1/skills/${SKILL}`)).revision;
    for (let round = 0; round < 2; round++) {
      const res = await call('anonymous', 'POST', '/v1/resolve', {
        items: [
          { identity: SKILL, revision: current },
          { identity: SKILL, revision: 'not-the-current-one' },
          { identity: 'hub:acme/tools/other' },
          { identity: 'hub:acme/tools' },
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      const [unchanged, changed, other, menu] = res.json().items;
      expect(unchanged).toMatchObject({ status: 'unchanged', flags: ['reported-malicious'] });
      expect(changed).toMatchObject({ status: 'changed', kind: 'skill', flags: ['reported-malicious'] });
      expect(other).toMatchObject({ status: 'changed', kind: 'skill', flags: [] });
      expect(menu).toMatchObject({ status: 'changed', kind: 'menu' });
      expect(menu.flags).toBeUndefined();
    }
  });

  it('is not carried to other content, and shows on ?rev= of the judged revision', async () => {
    await republish('v2');
    const current = await flagsOf(`/v1/skills/${SKILL}`);
    expect(current.revision).not.toBe(judged);
    expect(current.codes).not.toContain('reported-malicious');
    const pinned = await flagsOf(`/v1/skills/${SKILL}?rev=${judged}`);
    expect(pinned.codes).toContain('reported-malicious');
    expect(pinned.header).toContain('reported-malicious');
  });

  it('holds again when the judged content comes back under a new revision', async () => {
    await republish('v1');
    const back = await flagsOf(`/v1/skills/${SKILL}`);
    expect(back.codes).toContain('reported-malicious');
  });
});

describe('the report limit', () => {
  it(`holds for 25 parallel reports by one user: ${MAX_REPORTS_PER_HOUR} filed, the rest 429`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call('outsider', 'POST', `/v1/skills/${SKILL}/reports`, { kind: 'malicious', note: `parallel ${i}` }),
      ),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_REPORTS_PER_HOUR);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25 - MAX_REPORTS_PER_HOUR);
    const rows = (await hub.db.db.execute(
      `select count(*)::int as n from skill_reports r join users u on u.id = r.reporter_user_id where u.name = 'acme-outsider'` as never,
    )) as unknown as { rows: { n: number }[] };
    expect(rows.rows[0]?.n).toBe(MAX_REPORTS_PER_HOUR);
  });
});

describe('NUL and control characters in JSON strings', () => {
  const cases: { name: string; url: string; body: string; caller?: Caller }[] = [
    {
      name: 'report note',
      url: `/v1/skills/${SKILL}/reports`,
      body: '{"kind":"malicious","note":"bad\\u0000note"}',
    },
    {
      name: 'report revision',
      url: `/v1/skills/${SKILL}/reports`,
      body: '{"kind":"malicious","revision":"\\u0000"}',
    },
    {
      name: 'report rule',
      url: `/v1/skills/${SKILL}/reports`,
      body: '{"kind":"dispute","rule":"a\\u0007b"}',
    },
    { name: 'index request', url: '/v1/index-requests', body: '{"repo":"acme/to\\u0000ols"}' },
    {
      name: 'link',
      url: '/v1/teams/acme/links',
      body: '{"repo":"acme/tools","collection":"x\\u0000","credential":{"kind":"app"}}',
    },
    { name: 'decision note', url: '/admin/reports/1/accept', body: '{"note":"ok\\u0000"}', caller: 'admin' },
    {
      name: 'token label',
      url: '/admin/users/acme-owner/tokens',
      body: '{"label":"\\u0000","scopes":["read"]}',
    },
  ];

  it.each(cases)('$name: a 400 problem naming the field', async ({ url, body, caller }) => {
    const res = await call(caller ?? 'owner', 'POST', url, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().detail).toMatch(/control character|NUL/i);
    expect(res.body).not.toMatch(/insert into|select |\$1/i);
  });

  it('a note keeps its line breaks and tabs', async () => {
    const res = await call('publisher', 'POST', `/v1/skills/${SKILL}/reports`, {
      kind: 'malicious',
      note: 'line one\n\tline two\r\n',
    });
    expect(res.statusCode, res.body).toBe(201);
  });
});
