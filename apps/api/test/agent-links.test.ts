/**
 * Where agents start (SPEC 2.5): the home page links the client, SKILLS.md, /llms.txt and /mcp; /llms.txt
 * points at SKILLS.md, MCP (with its skills extension), the API and the discovery index; SKILLS.md passes
 * the message to the client on stdin in a quoted here-document, never on a command line, and its save step
 * does not restore the archive's fixed (1970) entry times onto the saved files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';

const HUB = 'https://hub.example';
let hub: TestHub;

beforeAll(async () => {
  hub = await createTestHub('agent_links', { PUBLIC_URL: HUB });
}, 60_000);

afterAll(async () => {
  await hub?.close();
});

describe('agent entry points', () => {
  it('the home page links the client, SKILLS.md, /llms.txt and /mcp', async () => {
    const home = await hub.app.inject({ url: '/' });
    expect(home.statusCode).toBe(200);
    for (const href of ['/cli/atskills.tgz', '/SKILLS.md', '/llms.txt', '/mcp'])
      expect(home.body).toContain(`href="${href}"`);
  });

  it('/llms.txt points at SKILLS.md, MCP, the API and the discovery index', async () => {
    const body = (await hub.app.inject({ url: '/llms.txt' })).body;
    for (const link of [
      '/SKILLS.md',
      '/mcp',
      '/openapi.json',
      '/.well-known/agent-skills/index.json',
      '/cli/atskills.tgz',
    ])
      expect(body).toContain(`(${HUB}${link})`);
    expect(body).toContain('skills/list');
  });

  it('SKILLS.md sends the message on stdin and never on a command line', async () => {
    const body = (await hub.app.inject({ url: '/SKILLS.md' })).body;
    expect(body).toContain(
      "atskills expand - <<'ATSKILLS_MESSAGE'\n<the user's message, exactly as written>\nATSKILLS_MESSAGE\n",
    );
    expect(body).not.toMatch(/atskills expand "/);
    expect(body).toContain('| tar -xzmf - -C "$D"');
    expect(body).toContain(`npx skills add ${HUB}`);
  });
});
