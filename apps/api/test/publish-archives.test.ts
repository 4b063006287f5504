import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectedRefusals,
  hostileArchives,
  packCollection,
  skill,
  skillMd,
} from '../../../test/fixtures/archives/make.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, publish, publishRowCounts, seedTeam, type Tokens } from './teams-fixtures.js';

let hub: TestHub;
let tokens: Tokens;

beforeAll(async () => {
  hub = await createTestHub('publish_archives');
  tokens = await seedTeam(hub.db.db, 'acme');
});

afterAll(async () => {
  await hub?.close();
});

describe('hostile archives', () => {
  // Built once each; the 100,000-file and bomb archives take a moment to make.
  const kinds = Object.keys(hostileArchives) as (keyof typeof hostileArchives)[];

  it.each(kinds)('%s is refused with its own problem code and stores nothing', async (kind) => {
    const before = await publishRowCounts(hub.db.db);
    const started = process.memoryUsage().rss;
    const res = await publish(hub.app, 'acme/hostile', hostileArchives[kind](), auth(tokens, 'publisher'));
    const expected = expectedRefusals[kind];
    expect(res.headers['content-type']).toContain('application/problem+json');
    const body = res.json();
    expect({ status: res.statusCode, code: body.code }).toEqual({
      status: expected.status,
      code: expected.code,
    });
    expect(body.detail).toEqual(expect.any(String));
    expect(await publishRowCounts(hub.db.db)).toEqual(before);
    // Bounded memory: nothing near the bomb's or the tiny-files' unpacked size stays allocated.
    expect(process.memoryUsage().rss - started).toBeLessThan(400 * 1024 * 1024);
  });

  it('names the file and rule of an alias bomb and of deep nesting', async () => {
    const bomb = (
      await publish(hub.app, 'acme/x', hostileArchives.yamlAliasBomb(), auth(tokens, 'publisher'))
    ).json();
    expect(bomb).toMatchObject({ code: 'invalid-skill', file: 'bomb/SKILL.md', rule: 'too-many-aliases' });
    const deep = (
      await publish(hub.app, 'acme/x', hostileArchives.deepYaml(), auth(tokens, 'publisher'))
    ).json();
    expect(deep).toMatchObject({ code: 'invalid-skill', file: 'deep/SKILL.md' });
    expect(['too-deep', 'invalid-yaml']).toContain(deep.rule);
  });
});

describe('publish validation', () => {
  const put = (body: Buffer) => publish(hub.app, 'acme/checks', body, auth(tokens, 'publisher'));

  it('rejects frontmatter that breaks the rules strictly, naming every file and rule', async () => {
    const res = await put(
      packCollection({
        'good/SKILL.md': skillMd('good', 'Fine.'),
        'bad-name/SKILL.md': skillMd('Bad_Name', 'Upper case and underscore.'),
        'mismatch/SKILL.md': skillMd('other', 'Name differs from folder.'),
        'nodesc/SKILL.md': '---\nname: nodesc\n---\nbody\n',
      }),
    );
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body.code).toBe('invalid-skill');
    expect(body.detail).toContain('bad-name/SKILL.md');
    const rules = body.errors.map((e: { file: string; rule: string }) => `${e.file} ${e.rule}`);
    expect(rules).toEqual(
      expect.arrayContaining([
        'bad-name/SKILL.md name-format',
        'bad-name/SKILL.md name-folder-mismatch',
        'mismatch/SKILL.md name-folder-mismatch',
        'nodesc/SKILL.md missing-description',
      ]),
    );
  });

  it('refuses an archive without skills, and one over the skill limit', async () => {
    expect((await put(packCollection({ 'README.md': '# nothing' }))).json().code).toBe('no-skills');
    const small = await createTestHub('publish_limits', {
      PUBLISH_MAX_SKILLS: '3',
      PUBLISH_MAX_ARCHIVE_BYTES: '4096',
    });
    try {
      const t = await seedTeam(small.db.db, 'lim');
      const files = Object.assign({}, ...['a', 'b', 'c', 'd'].map((n) => skill(n)));
      const res = await publish(small.app, 'lim/four', packCollection(files), auth(t, 'publisher'));
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ code: 'too-many-skills', count: 4, limit: 3 });
      // A gzip body over the archive limit is refused by size before it is unpacked.
      const big = await publish(small.app, 'lim/big', Buffer.alloc(5000, 0x1f), auth(t, 'publisher'));
      expect(big.statusCode).toBe(413);
      expect(big.json().code).toBe('payload-too-large');
    } finally {
      await small.close();
    }
  });

  it('refuses a body that is not gzip by media type, and a huge body before reading it', async () => {
    const wrongType = await hub.app.inject({
      method: 'PUT',
      url: '/v1/collections/acme/checks',
      headers: { 'content-type': 'application/json', ...auth(tokens, 'publisher') },
      payload: '{}',
    });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json().code).toBe('unsupported-media-type');
    // An anonymous upload is refused before its body is parsed (so even a non-gzip body gets the 401).
    const anonymous = await publish(hub.app, 'acme/checks', Buffer.from('not even gzip'), {});
    expect(anonymous.statusCode).toBe(401);
  });

  it('refuses bad namespace and collection names', async () => {
    const res = await publish(
      hub.app,
      'acme/Bad%20Name!',
      packCollection(skill('a')),
      auth(tokens, 'publisher'),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid-name');
  });
});
