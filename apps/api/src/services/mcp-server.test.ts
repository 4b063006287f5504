import { describe, expect, it } from 'vitest';
import { MCP_MAX_ITEMS, mcpInstructions, mcpMessageCost } from './mcp-server.js';
import { skillFolderUri } from './mcp-skills-extension.js';

const batch = (items: unknown) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'resolve_batch', arguments: { items } },
});

describe('mcpMessageCost', () => {
  it('charges one per message and one per resolve_batch item', () => {
    expect(mcpMessageCost({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(1);
    expect(mcpMessageCost({ method: 'tools/call', params: { name: 'resolve_skill', arguments: {} } })).toBe(
      1,
    );
    expect(mcpMessageCost(batch(Array.from({ length: 128 }, () => ({}))))).toBe(128);
    expect(mcpMessageCost(batch([]))).toBe(1);
    expect(2 * 128).toBe(MCP_MAX_ITEMS);
  });

  it('charges one for whatever is not a well-formed message', () => {
    for (const odd of [null, 'x', 42, [], { method: 'tools/call' }, batch('not an array')])
      expect(mcpMessageCost(odd)).toBe(1);
  });
});

describe('mcpInstructions', () => {
  it('names the hub, the tools, the suffixes and where to save or install', () => {
    const text = mcpInstructions('https://hub.example');
    for (const needle of [
      'https://hub.example/SKILLS.md',
      '@skills:',
      'resolve_skill',
      'search_skills',
      ':save',
      ':install',
    ])
      expect(text).toContain(needle);
  });
});

describe('skillFolderUri', () => {
  it('percent-encodes each segment under the source authority', () => {
    expect(skillFolderUri('hub:acme/playbooks/deploy')).toBe('skill://hub/acme/playbooks/deploy');
    expect(skillFolderUri('gh:o/r/a b/c%d')).toBe('skill://gh/o/r/a%20b/c%25d');
  });
});

describe('an unexpected failure inside a tool', () => {
  it('answers the internal problem, never the error text (SQL and its parameters)', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
    const { buildMcpServer } = await import('./mcp-server.js');
    const leak = 'Failed query: select "identity" from "skills" where "revision" = $1\nparams: secret-param';
    // Every database call fails the way a driver error does.
    const db = new Proxy(
      {},
      {
        get: () => () => {
          throw new Error(leak);
        },
      },
    ) as never;
    const logged: unknown[] = [];
    const server = buildMcpServer({
      db,
      searchEngine: {} as never,
      viewer: { isAdmin: false, readableNamespaces: [] },
      version: '1.0.0',
      logError: (error) => logged.push(error),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'unit', version: '1.0.0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      const result = await client.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'hub:acme/playbooks/deploy', revision: 'abc' },
      });
      const text = JSON.stringify(result);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ status: 500, code: 'internal' });
      expect(text).not.toContain('select');
      expect(text).not.toContain('secret-param');
      expect(logged).toHaveLength(1);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
