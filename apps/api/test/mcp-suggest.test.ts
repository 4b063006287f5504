/**
 * The MCP tool suggest_skills as a model reads it (SPEC 2.5, 2.7, 2.8): its errors are the same tool results
 * as every other tool's (the problem's extensions and retryAfterSeconds kept; an unexpected error logged and
 * answered as `internal`, its text never shown), the instructions say when to call it rather than
 * search_skills, and its frame names each suggestion's identity, revision and flags. Each POST goes
 * through app.inject, as a client's would.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../../test/support/eventually.js';
import { loggerOptions } from '../src/runtime/logging.js';
import { mcpInstructions } from '../src/services/mcp-server.js';
import { SuggestOverloadedError, SuggestUnavailableError } from '../src/suggest/engine.js';
import { createTestHub, type TestHub } from './support/app.js';
import { initializeMessage, postMcp, rpcMessage } from './support/mcp.js';
import { seedRepository, skillMd } from './support/seed.js';

const MESSAGE = 'write release notes from my git commits since the last tag';

let hub: TestHub;
const logLines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  hub = await createTestHub(
    'mcp_suggest',
    { SEARCH_ENGINE: 'memory' },
    { logger: pino(loggerOptions('error'), sink) },
  );
  await seedRepository(hub.db.db, 'devtools', 'skills', {
    'release-notes/SKILL.md': skillMd(
      'release-notes',
      'Write release notes and a changelog from the git commits since the last tag',
      '# release-notes\n\nGroup commits by type: features, fixes, breaking changes.\n',
    ),
    'pdf-extract/SKILL.md': skillMd('pdf-extract', 'Extract text and tables from PDF files into markdown'),
  });
  await hub.app.ready();
  // The in-memory index builds in the background (search falls back to Postgres meanwhile) and suggestions
  // read it: on a loaded machine it was not built yet and the suggestion abstained. Built once it answers.
  await eventually(async () => {
    const answer = await hub.app.inject({ url: '/v1/search?q=release+notes' });
    return answer.headers['x-search-engine'] === 'memory' && answer.json().results.length > 0;
  });
  await hub.app.suggestEngine.build();
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

/** The JSON-RPC body of a call that must answer 200. */
// biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are checked field by field
async function post(app: FastifyInstance, body: unknown): Promise<any> {
  const answer = await postMcp(app, body);
  expect(answer.statusCode, JSON.stringify(answer.json)).toBe(200);
  return answer.json;
}

/** One suggest_skills call: its result (`isError`, `content`, `structuredContent`). */
async function suggest(args: unknown) {
  const answer = await post(hub.app, rpcMessage('tools/call', { name: 'suggest_skills', arguments: args }));
  return answer.result as {
    isError?: boolean;
    content: { type: string; text: string }[];
    // biome-ignore lint/suspicious/noExplicitAny: checked field by field
    structuredContent?: any;
  };
}

describe('suggest_skills errors are the shared problem results', () => {
  it('keeps retryAfterSeconds while the model builds, as resolve_skill keeps it for an unindexed repository', async () => {
    const building = vi
      .spyOn(hub.app.suggestEngine, 'suggest')
      .mockRejectedValueOnce(new SuggestUnavailableError('the suggestion model is still building', 30));
    try {
      const result = await suggest({ message: MESSAGE });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({
        status: 503,
        code: 'unavailable',
        detail: 'Suggestions are not available yet: the suggestion model is still building',
        retryAfterSeconds: 30,
      });
      // The text a model reads is the same problem.
      expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
    } finally {
      building.mockRestore();
    }
  });

  it("keeps the problem's extensions: how many suggestions wait ahead of an overloaded call", async () => {
    const overloaded = vi
      .spyOn(hub.app.suggestEngine, 'suggest')
      .mockRejectedValueOnce(new SuggestOverloadedError(40, 900));
    try {
      const result = await suggest({ message: MESSAGE });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        status: 503,
        code: 'unavailable',
        ahead: 40,
        retryAfterSeconds: 1,
      });
    } finally {
      overloaded.mockRestore();
    }
  });

  it('logs an error that is no hub problem and answers internal, never its text', async () => {
    const leak = 'Failed query: select "identity" from "skills" where "revision" = $1\nparams: secret-param';
    const failing = vi.spyOn(hub.app.suggestEngine, 'suggest').mockRejectedValueOnce(new Error(leak));
    const logged = logLines.length;
    try {
      const result = await suggest({ message: MESSAGE });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({
        status: 500,
        code: 'internal',
        detail: 'The hub failed to answer this call; try again later',
      });
      const all = JSON.stringify(result);
      expect(all).not.toContain('secret-param');
      expect(all.toLowerCase()).not.toContain('select');
      // The operator sees it in the logs, at error level, with the error.
      const entry = logLines
        .slice(logged)
        .map((line) => JSON.parse(line) as { level: number; msg: string; err?: unknown })
        .find((e) => e.msg === 'MCP tool call failed');
      expect(entry?.level).toBe(50);
      expect(entry?.err).toBeDefined();
    } finally {
      failing.mockRestore();
    }
  });
});

describe('the instructions', () => {
  it('say when to call suggest_skills (the message as typed, once per task, abstained means nothing) and when search_skills', async () => {
    const init = await post(hub.app, initializeMessage());
    const instructions: string = init.result.instructions;
    const paragraph = (tool: string) =>
      instructions.split('\n\n').find((p) => p.toLowerCase().includes(`call ${tool}`)) ?? '';
    const suggestion = paragraph('suggest_skills');
    for (const needle of [
      "the user's message exactly as they typed it",
      'once',
      'abstained: true',
      'say nothing',
    ])
      expect(suggestion).toContain(needle);
    expect(suggestion).not.toContain('in your own words');
    const search = paragraph('search_skills');
    expect(search).toContain('instead');
    expect(search).toContain('by name or keywords');
    // A server without the tool never names it.
    expect(mcpInstructions('https://hub.example', { suggest: false })).not.toContain('suggest_skills');
  });
});

describe('the suggestions frame', () => {
  it('names each suggestion with its identity, revision and flags, as the other tools frame skill text', async () => {
    const result = await suggest({ message: MESSAGE });
    expect(result.isError).toBeFalsy();
    const top = result.structuredContent.results[0];
    expect(top.identity).toBe('gh:devtools/skills/release-notes');
    const rest = await hub.app.inject({ url: `/v1/skills/${top.identity}` });
    expect(top.revision).toBe(rest.json().revision);
    const text = result.content[0]!.text;
    const open = /<(skill-text-[0-9a-f]{16}) kind="suggestions"[^\n>]*>\n/.exec(text);
    expect(open, text).not.toBeNull();
    const inner = text.slice(open!.index + open![0].length, text.indexOf(`</${open![1]}>`));
    const line = inner.split('\n').find((l) => l.startsWith(`@skills:${top.identity} `));
    expect(line).toBeDefined();
    expect(line).toContain(`(revision ${top.revision}, score ${top.score}, for "`);
  });
});
