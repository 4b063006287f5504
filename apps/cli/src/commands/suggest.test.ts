import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SUGGEST_MAX_MESSAGE, SUGGEST_TIMEOUT_HEADER, type SuggestResult } from '@atskills/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { suggestedSkill } from '../../../../packages/protocol/src/http.test-support.js';
import { runCaptured } from '../cli.test-support.js';
import { SUGGEST_COMMAND_TIMEOUT_MS, suggestionLines, suggestTimeoutMs } from './suggest.js';

function result(name: string, score: number): SuggestResult {
  return suggestedSkill(name, score, { description: `Does ${name}\nwell.` });
}

describe('atskills suggest output', () => {
  it('lists suggestions scored under 0.1 after the others, under a line that says they rarely help', () => {
    const lines = suggestionLines([
      result('a', 0.62),
      result('b', 0.1),
      result('c', 0.04),
      result('d', 0.01),
    ]);
    expect(lines).toEqual([
      '@skills:hub:acme/tools/a  (score 0.62, for "fix it")\n    a: Does a well.',
      '@skills:hub:acme/tools/b  (score 0.10, for "fix it")\n    b: Does b well.',
      'Less likely to help (scored under 0.10; such suggestions rarely help):',
      '@skills:hub:acme/tools/c  (score 0.04, for "fix it")\n    c: Does c well.',
      '@skills:hub:acme/tools/d  (score 0.01, for "fix it")\n    d: Does d well.',
    ]);
  });

  it('says so when no suggestion is likely to help, and adds no line when all are', () => {
    expect(suggestionLines([result('c', 0.09)])[0]).toBe(
      'None is likely to help (every score is under 0.10; such suggestions rarely help):',
    );
    expect(suggestionLines([result('a', 0.5), result('b', 0.3)])).toHaveLength(2);
  });
});

/** How the hub stand-in answers one request: a status, headers and a body, or `hang` to never answer. */
type Answer = { status: number; headers?: Record<string, string>; body: unknown } | 'hang';

/** A hub stand-in: `answer` decides each response; every request's route, headers and body are recorded. */
async function hubStandIn(answer: (route: string) => Answer) {
  const seen: { route: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const route = req.url ?? '';
      seen.push({ route, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const a = answer(route);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Runs `atskills <argv>` in-process against `hubUrl`, `stdin` as the piped message. */
function run(argv: string[], hubUrl: string, options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}) {
  return runCaptured(argv, { ...options, env: { ATSKILLS_HUB: hubUrl, ...options.env } });
}

/** A suggestion as this hub sends it: the protocol's fields and the hub's own (kind, stars, uses...). */
function hubSuggestion(name: string, description = `Does ${name}.`) {
  return {
    ...suggestedSkill(name, 0.8, { description }),
    kind: 'skill',
    stars: 12,
    uses: { week: 3, total: 40 },
    bodyTokens: 900,
    warnings: ['look-alike name'],
  };
}

const ok = (results: unknown[]): Answer => ({ status: 200, body: { results, abstained: false } });

describe('atskills suggest against a hub', () => {
  it('checks the length as the hub does (code points): a message of emoji it accepts is sent', async () => {
    const hub = await hubStandIn(() => ok([hubSuggestion('a')]));
    // 5,000 emoji: 10,000 UTF-16 units, 5,000 characters to the hub's schema.
    const accepted = await run(['suggest'], hub.url, { stdin: '😀'.repeat(5_000) });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(hub.seen[0]!.body).message).toBe('😀'.repeat(5_000));
    const refused = await run(['suggest'], hub.url, { stdin: '😀'.repeat(SUGGEST_MAX_MESSAGE + 1) });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('The message is 8,001 characters; the hub reads up to 8,000.');
    expect(hub.seen).toHaveLength(1);
  });

  it('prints no control character of the hub text a terminal would act on', async () => {
    const hostile = '\u001b[2J\u001b]0;pwned\u0007';
    const hub = await hubStandIn(() =>
      ok([
        {
          ...hubSuggestion('a', `Clears ${hostile}the\u009b screen\u202e.`),
          name: `a${hostile}`,
          matched: `fix${hostile}`,
        },
      ]),
    );
    const result = await run(['suggest', 'fix', 'it'], hub.url);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('@skills:hub:acme/tools/a');
    expect(result.stdout).toContain('Clears [2J]0;pwnedthe screen.');
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    // --json is the hub's JSON: escaped by JSON itself, never printed raw.
    const json = await run(['suggest', '--json', 'fix', 'it'], hub.url);
    expect(json.stdout).not.toContain('\u001b');
    expect(JSON.parse(json.stdout).results[0].name).toBe(`a${hostile}`);
  });

  it('prints the hub answer as received with --json, once it parses', async () => {
    const answer = { results: [hubSuggestion('a'), hubSuggestion('b')], abstained: false };
    const hub = await hubStandIn(() => ({ status: 200, body: answer }));
    const result = await run(['suggest', '--json', 'fix', 'it'], hub.url);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(answer);
    const broken = await hubStandIn(() => ({ status: 200, body: { results: [{ identity: 1 }] } }));
    const refused = await run(['suggest', '--json', 'fix', 'it'], broken.url);
    expect(refused.code).toBe(4);
    expect(refused.stdout).toBe('');
  });

  it('waits 10 s at most unless ATSKILLS_FETCH_TIMEOUT_MS says otherwise, and tells the hub so', async () => {
    const hub = await hubStandIn(() => ok([]));
    await run(['suggest', 'fix', 'it'], hub.url);
    await run(['suggest', 'fix', 'it'], hub.url, { env: { ATSKILLS_FETCH_TIMEOUT_MS: '1500' } });
    await run(['suggest', 'fix', 'it'], hub.url, { env: { ATSKILLS_FETCH_TIMEOUT_MS: 'soon' } });
    expect(hub.seen.map((s) => s.headers[SUGGEST_TIMEOUT_HEADER])).toEqual(['10000', '1500', '10000']);
    expect(suggestTimeoutMs({}, 300_000)).toBe(SUGGEST_COMMAND_TIMEOUT_MS);
    expect(suggestTimeoutMs({ ATSKILLS_FETCH_TIMEOUT_MS: '300000' }, 300_000)).toBe(300_000);

    const silent = await hubStandIn(() => 'hang');
    const started = performance.now();
    const result = await run(['suggest', 'fix', 'it'], silent.url, {
      env: { ATSKILLS_FETCH_TIMEOUT_MS: '300' },
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('no complete answer within 0.3 s');
  });

  it('says what to do when the hub is down, refuses, limits or is busy, worded for suggest', async () => {
    const down = await hubStandIn(() => ok([]));
    const downUrl = down.url;
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    const unreachable = await run(['suggest', 'fix', 'it'], downUrl);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toContain('cannot be reached');
    expect(unreachable.stderr).toContain('ATSKILLS_HUB');
    expect(unreachable.stderr).not.toContain('--offline');

    const problem = (status: number, code: string, detail: string, headers: Record<string, string> = {}) =>
      hubStandIn(() => ({
        status,
        headers: { 'content-type': 'application/problem+json', ...headers },
        body: { type: 'about:blank', title: code, status, code, detail },
      }));
    const limited = await run(
      ['suggest', 'fix', 'it'],
      (await problem(429, 'rate-limited', 'Too many requests.', { 'retry-after': '7' })).url,
    );
    expect(limited.code).toBe(4);
    expect(limited.stderr).toBe(
      'atskills: The hub is limiting requests (429): Too many requests. Try again in 7 s.\n',
    );
    const busy = await run(
      ['suggest', 'fix', 'it'],
      (await problem(503, 'unavailable', 'Suggestions are queued past your deadline', { 'retry-after': '1' }))
        .url,
    );
    expect(busy.code).toBe(4);
    expect(busy.stderr).toContain('(503): Suggestions are queued past your deadline. Try again in 1 s.');
    const denied = await run(
      ['suggest', 'fix', 'it'],
      (await problem(401, 'unauthorized', 'Invalid token.')).url,
    );
    expect(denied.code).toBe(7);
    expect(denied.stderr).toContain('(401): Invalid token. Run `atskills login');
    expect(denied.stderr).not.toContain('..');
  });

  it('names the setting and its value when the hub URL is no URL', async () => {
    for (const argv of [
      ['suggest', 'fix', 'it'],
      ['search', 'deploy'],
      // The resolver's requests (a skill, a menu) take their URL from the same check.
      ['get', 'hub:acme/tools/lint'],
      ['get', 'hub:acme/tools'],
    ]) {
      const result = await run(argv, 'notaurl');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('"notaurl" (ATSKILLS_HUB');
    }
  });
});

describe('atskills search against a hub', () => {
  it('prints every field the hub sent with --json, the pages it followed joined', async () => {
    const { score: _score, matched: _matched, ...hit } = hubSuggestion('a');
    // Fields this client's schema does not name (the hub's extra figures, a newer hub's additions) stay.
    const first = { ...hit, uses: { total: 3, week: 1 }, futureField: 'kept' };
    const second = { ...hit, identity: 'hub:acme/tools/b', name: 'b', reference: '@skills:hub:acme/tools/b' };
    const hub = await hubStandIn((route) =>
      route.includes('cursor=next')
        ? { status: 200, body: { results: [second], nextCursor: null, ignored: ['zz'] } }
        : { status: 200, body: { results: [first], nextCursor: 'next', ignored: ['zz'] } },
    );
    const result = await run(['search', '--json', '--pages', '2', 'lint', 'zz'], hub.url);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      results: [first, second],
      nextCursor: null,
      ignored: ['zz'],
    });
  });

  it('prints no control character of the hub text a terminal would act on', async () => {
    const hostile = '\u001b[2J\u001b]0;pwned\u0007';
    const { score: _score, matched: _matched, ...hit } = hubSuggestion('a', `Clears ${hostile}the screen.`);
    const hub = await hubStandIn(() => ({
      status: 200,
      body: {
        results: [
          {
            ...hit,
            name: `a${hostile}`,
            flags: [{ code: `x${hostile}`, severity: 'warning', message: 'x' }],
          },
        ],
        nextCursor: null,
      },
    }));
    const result = await run(['search', 'clear'], hub.url);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Clears [2J]0;pwnedthe screen.');
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});
