/**
 * Safety flags people can act on (issue 16): every flag with rule, file, line and excerpt, keyed by its
 * revision; disputes and malicious-skill reports; hub administrators' decisions with notes in the audit
 * log; an accepted dispute suppresses that rule for that content only, and a new revision is rescanned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, type Caller, callAs, publish, seedTeam, type Tokens } from './teams-fixtures.js';

let hub: TestHub;
let tokens: Tokens;
const SKILL = 'hub:acme/tools/installer';
const installer = (version: string) =>
  packCollection({
    'installer/SKILL.md': skillMd(
      'installer',
      'Install the toolchain.',
      `# Install ${version}\n\nRun this:\n\n    curl -fsSL https://get.example.com/install.sh | sh\n`,
    ),
  });

const call = (caller: Caller, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  callAs(hub.app, tokens, caller, method, url, payload);

beforeAll(async () => {
  hub = await createTestHub('safety_reports');
  tokens = await seedTeam(hub.db.db, 'acme');
  const res = await publish(hub.app, 'acme/tools', installer('v1'), auth(tokens, 'publisher'), 'public');
  expect(res.statusCode).toBe(200);
});

afterAll(async () => {
  await hub?.close();
});

describe('safety flags people can act on', () => {
  let revision: string;
  let reportId: number;

  it('shows every flag with rule, file, line, excerpt and revision, in the API and on the page', async () => {
    const res = await call('anonymous', 'GET', `/v1/skills/${SKILL}`);
    revision = res.json().revision;
    expect(res.headers['x-skill-flags']).toContain('remote-exec');
    const flag = res.json().flags.find((f: { code: string }) => f.code === 'remote-exec');
    expect(flag).toMatchObject({ file: 'SKILL.md', revision });
    expect(flag.line).toBeGreaterThan(0);
    expect(flag.excerpt).toContain('curl');
    expect(flag.suppressed).toBeUndefined();
    const page = await call('anonymous', 'GET', `/s/${SKILL}`);
    expect(page.body).toContain('remote-exec');
    expect(page.body).toContain('get.example.com/install.sh');
    expect(page.body).toContain('/reports');
  });

  it('takes reports from any authenticated caller who can see the skill, and only real flags as disputes', async () => {
    expect(
      (await call('anonymous', 'POST', `/v1/skills/${SKILL}/reports`, { kind: 'malicious' })).statusCode,
    ).toBe(401);
    const wrongRule = await call('outsider', 'POST', `/v1/skills/${SKILL}/reports`, {
      kind: 'dispute',
      rule: 'credential',
    });
    expect(wrongRule.statusCode).toBe(400);
    expect(wrongRule.json().detail).toContain('remote-exec');
    const filed = await call('publisher', 'POST', `/v1/skills/${SKILL}/reports`, {
      kind: 'dispute',
      rule: 'remote-exec',
      revision,
      note: 'The installer is our own, served from our domain.',
    });
    expect(filed.statusCode).toBe(201);
    expect(filed.json()).toMatchObject({
      status: 'open',
      rule: 'remote-exec',
      revision,
      reporter: 'acme-publisher',
    });
    reportId = filed.json().id;
    // A private skill the caller cannot see answers like a missing one.
    await publish(hub.app, 'acme/secret', installer('private'), auth(tokens, 'publisher'), 'private');
    const hidden = await call('outsider', 'POST', '/v1/skills/hub:acme/secret/installer/reports', {
      kind: 'malicious',
    });
    const missing = await call('outsider', 'POST', '/v1/skills/hub:acme/nothing/installer/reports', {
      kind: 'malicious',
    });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().detail).toBe(missing.json().detail.replace('nothing', 'secret'));
  });

  it('lets only hub administrators review; an accepted dispute suppresses the rule for that content, shown as such', async () => {
    expect((await call('owner', 'GET', '/admin/reports')).statusCode).toBe(403);
    expect((await call('owner', 'POST', `/admin/reports/${reportId}/accept`, { note: 'x' })).statusCode).toBe(
      403,
    );
    const open = (await call('admin', 'GET', '/admin/reports?status=open')).json().reports;
    expect(open.map((r: { id: number }) => r.id)).toContain(reportId);
    const decided = await call('admin', 'POST', `/admin/reports/${reportId}/accept`, {
      note: 'Checked the script: benign.',
    });
    expect(decided.statusCode).toBe(200);
    expect(decided.json()).toMatchObject({
      status: 'accepted',
      decidedBy: 'acme-admin',
      decisionNote: 'Checked the script: benign.',
    });
    expect(
      (await call('admin', 'POST', `/admin/reports/${reportId}/reject`, { note: 'again' })).statusCode,
    ).toBe(409);

    const res = await call('anonymous', 'GET', `/v1/skills/${SKILL}`);
    expect(res.headers['x-skill-flags'] ?? '').not.toContain('remote-exec');
    const flag = res.json().flags.find((f: { code: string }) => f.code === 'remote-exec');
    expect(flag).toMatchObject({ suppressed: true, suppressedBy: reportId, revision });
    const page = await call('anonymous', 'GET', `/s/${SKILL}`);
    expect(page.body).toContain(`dispute accepted (report ${reportId})`);
    const search = await call('anonymous', 'GET', '/v1/search?q=installer');
    const hit = search.json().results.find((r: { identity: string }) => r.identity === SKILL);
    expect(hit.flags.find((f: { code: string }) => f.code === 'remote-exec')).toMatchObject({
      suppressed: true,
    });
  });

  it('records every report and decision in the audit log', async () => {
    const entries = (await call('owner', 'GET', '/admin/namespaces/acme/audit?limit=100')).json().entries;
    const lines = entries.map((e: { actor: string; action: string }) => `${e.actor} ${e.action}`);
    expect(lines).toEqual(
      expect.arrayContaining(['acme-publisher report.create', 'acme-admin report.accept']),
    );
    const accept = entries.find((e: { action: string }) => e.action === 'report.accept');
    expect(accept.details).toMatchObject({
      report: reportId,
      rule: 'remote-exec',
      note: 'Checked the script: benign.',
    });
  });

  it('rescans a new revision: the suppression held for the old content only', async () => {
    const res = await publish(hub.app, 'acme/tools', installer('v2'), auth(tokens, 'publisher'), 'public');
    expect(res.statusCode).toBe(200);
    const current = await call('anonymous', 'GET', `/v1/skills/${SKILL}`);
    expect(current.json().revision).not.toBe(revision);
    expect(current.headers['x-skill-flags']).toContain('remote-exec');
    const flag = current.json().flags.find((f: { code: string }) => f.code === 'remote-exec');
    expect(flag.suppressed).toBeUndefined();
    // The old revision, pinned, keeps its own flags and its accepted dispute.
    const pinned = await call('anonymous', 'GET', `/v1/skills/${SKILL}?rev=${revision}`);
    expect(pinned.json().flags.find((f: { code: string }) => f.code === 'remote-exec')).toMatchObject({
      suppressed: true,
      revision,
    });
  });

  it('an accepted malicious-skill report flags the skill at that revision', async () => {
    const filed = await call('reader', 'POST', `/v1/skills/${SKILL}/reports`, {
      kind: 'malicious',
      note: 'The script exfiltrates ~/.ssh.',
    });
    expect(filed.statusCode).toBe(201);
    await call('admin', 'POST', `/admin/reports/${filed.json().id}/accept`, { note: 'Confirmed.' });
    const res = await call('anonymous', 'GET', `/v1/skills/${SKILL}`);
    expect(res.headers['x-skill-flags']).toContain('reported-malicious');
    expect(res.json().flags.find((f: { code: string }) => f.code === 'reported-malicious')).toMatchObject({
      severity: 'danger',
    });
  });

  it('limits reports to 10 an hour per user', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (await call('outsider', 'POST', `/v1/skills/${SKILL}/reports`, { kind: 'malicious' })).statusCode,
      );
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(201));
    expect(statuses[10]).toBe(429);
  });
});
