/**
 * /v1/suggest in the app (SPEC 2.7): the answer's shape, abstention, input errors, private skills seen
 * only by those who may read them, skills written after start suggested through the change feed, the
 * model's figures on /metrics, and a suggestion or a batch resolve counted as a read, not a write.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fetchSuggestions, parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import { eventually } from '../../../test/support/eventually.js';
import { unusedPort } from '../../../test/support/ports.js';
import {
  SuggestAbandonedError,
  SuggestOverloadedError,
  SuggestUnavailableError,
} from '../src/suggest/engine.js';
import { MAX_QUOTED_WORDS } from '../src/suggest/matched.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedRepository, skillMd } from './support/seed.js';
import { auth, seedTeam, type Tokens } from './teams-fixtures.js';

/** A tool's answer, checked field by field. */
type ToolAnswer = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent: { abstained: boolean; results: Record<string, unknown>[] };
};

const body = (name: string, text: string) => `# ${name}\n\n${text}\n`;

describe('/v1/suggest', () => {
  let hub: TestHub;
  let tokens: Tokens;
  const post = async (message: string, headers: Record<string, string> = {}, limit?: number) =>
    hub.app.inject({
      method: 'POST',
      url: '/v1/suggest',
      headers,
      payload: { message, ...(limit ? { limit } : {}) },
    });

  beforeAll(async () => {
    hub = await createTestHub('suggest', { SEARCH_ENGINE: 'memory' });
    tokens = await seedTeam(hub.db.db, 'acme');
    await seedRepository(hub.db.db, 'devtools', 'skills', {
      'ci-fix/SKILL.md': skillMd(
        'ci-fix',
        'Fix failing GitHub Actions checks on a pull request: read the workflow logs, find the failing step, fix it',
        body(
          'ci-fix',
          "Pull the Actions run logs with gh run view, find the lint or test step that failed, fix, push and re-run. If you couldn't find it, ask.",
        ),
      ),
      'release-notes/SKILL.md': skillMd(
        'release-notes',
        'Write release notes and a changelog from the git commits since the last tag',
        body(
          'release-notes',
          'Group commits by type: features, fixes, breaking changes. Two levels of headings.',
        ),
      ),
      'pdf-extract/SKILL.md': skillMd(
        'pdf-extract',
        'Extract text and tables from PDF files into markdown',
        body('pdf-extract', 'Use pdfplumber for tables and text.'),
      ),
      'timing-safe-compare/SKILL.md': skillMd(
        'timing-safe-compare',
        'Find timing side channels in secret comparisons and replace them with constant-time comparison',
        body(
          'timing-safe-compare',
          'A comparison that bails out at the first differing byte leaks how many bytes matched: an attacker measures the time.',
        ),
      ),
    });
    await hub.app.ready();
    await hub.app.suggestEngine.build();
  }, 60_000);
  afterAll(async () => hub?.close());

  it('answers a message with the skill it needs, its score and the words it answers', async () => {
    const r = await post('the CI on my PR keeps failing on lint, can you pull the Actions logs and fix it');
    expect(r.statusCode).toBe(200);
    const answer = r.json();
    expect(answer.abstained).toBe(false);
    expect(answer.results[0].identity).toBe('gh:devtools/skills/ci-fix');
    expect(answer.results[0].score).toBeGreaterThan(0);
    expect(answer.results[0].score).toBeLessThanOrEqual(1);
    expect(answer.results[0].matched.length).toBeGreaterThan(0);
    expect('the CI on my PR keeps failing on lint, can you pull the Actions logs and fix it').toContain(
      answer.results[0].matched,
    );
    // What a search result carries.
    expect(answer.results[0]).toMatchObject({
      kind: 'skill',
      reference: expect.stringContaining('gh:devtools/skills/ci-fix'),
      repository: 'devtools/skills',
      descriptionTokens: expect.any(Number),
      flags: [],
    });
  });

  it('quotes a phrase of the message: whole words, never the end of a contraction', async () => {
    // ci-fix holds the words "re" (re-run) and "couldn", which "we're" and "couldn't" also leave once their
    // apostrophes split them.
    const message = "we're stuck: the CI lint job and the Actions logs say we couldn't";
    const top = (await post(message)).json().results[0];
    expect(top.identity).toBe('gh:devtools/skills/ci-fix');
    expect(top.matched).toBe("CI lint job and the Actions logs say we couldn't");
    // A word in single quotes is a word of the message, not the end of a contraction.
    const quoted = "the 'CI' lint fails on my PR, fix it";
    expect((await post(quoted)).json().results[0].matched).toBe("CI' lint fails on my PR, fix");
  });

  it("quotes the user's own characters: a file name keeps its extension", async () => {
    const message = 'write the release notes into CHANGELOG.md from the git commits since the last tag';
    const top = (await post(message)).json().results[0];
    expect(top.identity).toBe('gh:devtools/skills/release-notes');
    expect(top.matched).toContain('CHANGELOG.md');
    expect(message).toContain(top.matched);
  });

  it('quotes the phrase of a long message a skill answers, not a short clause that opens it', async () => {
    // release-notes holds "two" (its body), the one word of the opening clause.
    const message =
      'Two things today. First, the CI on my PR keeps failing on lint again, pull the Actions logs and fix it. ' +
      'Second, write the release notes and a changelog from the git commits since the last tag, because the ' +
      'team keeps asking me what shipped this week and I never have an answer ready for them.';
    const results: { identity: string; matched: string }[] = (await post(message)).json().results;
    const notes = results.find((r) => r.identity === 'gh:devtools/skills/release-notes');
    expect(notes?.matched).toMatch(/^(write the )?release notes and a changelog from the git commits\b/);
    for (const r of results) {
      expect(message).toContain(r.matched);
      expect(r.matched).not.toBe('Two');
      expect(r.matched.split(' ').length).toBeLessThanOrEqual(MAX_QUOTED_WORDS);
    }
  });

  it('quotes the phrase holding most of what the skill is about, not a short clause it covers', async () => {
    // pdf-extract covers more of the last clause (two of its three words) than of the first sentence, whose
    // densest phrase holds over twice the evidence (five words it is about).
    const message =
      'From the old billing portal I got sixty supplier PDF files and need text and tables extracted. ' +
      'Copy-pasting by hand is killing me. Keep tables as markdown.';
    const top = (await post(message)).json().results[0];
    expect(top.identity).toBe('gh:devtools/skills/pdf-extract');
    expect(top.matched).toBe('PDF files and need text and tables extracted');
  });

  it('answers GET with the message in q, and the limit', async () => {
    const r = await hub.app.inject({
      url: `/v1/suggest?q=${encodeURIComponent('write release notes from my commits')}&limit=1`,
    });
    expect(r.statusCode).toBe(200);
    expect(r.json().results.map((x: { identity: string }) => x.identity)).toEqual([
      'gh:devtools/skills/release-notes',
    ]);
  });

  it('finds the need under code blocks, stack traces and quoted mail', async () => {
    const message = [
      'hi! quick one.',
      '> On Monday Bob wrote:',
      '> the deploy is red again',
      '```',
      'Traceback (most recent call last):',
      '  File "/srv/app/main.py", line 3, in <module>',
      '```',
      'can you extract the tables from /tmp/q3-report.pdf into markdown?',
    ].join('\n');
    const answer = (await post(message)).json();
    expect(answer.abstained).toBe(false);
    expect(answer.results[0].identity).toBe('gh:devtools/skills/pdf-extract');
  });

  // A hang detector, not a speed target: the first message held the event loop for 17 s before need finding
  // was made linear (test/architecture/regex-safety.test.ts); all five now take under a second.
  it('answers the longest hostile messages, each of which once held the hub for seconds', {
    timeout: 10_000,
  }, async () => {
    for (const message of [
      `${'x'.repeat(4_001)}${' '.repeat(3_998)}y`,
      'a-'.repeat(4_000),
      `${'A+'.repeat(3_999)}_`,
      `at N${'A0'.repeat(3_998)}`,
      `~~~\n${'\n\t'.repeat(3_997)}\``,
    ]) {
      const r = await post(message);
      expect(r.statusCode).toBe(200);
      expect(r.json()).toHaveProperty('abstained');
    }
  });

  it('abstains on a message with no task for a skill', async () => {
    for (const message of ['thanks, that worked!', 'lol nice one', 'ok cool, sounds good']) {
      expect((await post(message)).json()).toEqual({ results: [], abstained: true });
    }
  });

  it('refuses an empty, over-long or out-of-range request with a 400 problem', async () => {
    for (const r of [
      await post(''),
      await post('x'.repeat(8_001)),
      await post('release notes', {}, 11),
      await hub.app.inject({ url: '/v1/suggest?q=' }),
      await hub.app.inject({ url: `/v1/suggest?q=${'a'.repeat(2_001)}` }),
    ]) {
      expect(r.statusCode).toBe(400);
      expect(r.headers['content-type']).toContain('application/problem+json');
    }
    expect((await post('x '.repeat(3_999))).statusCode).toBe(200);
  });

  it('suggests private skills only to those who may read them, and skills written after start', async () => {
    await seedHubCollection(
      hub.db.db,
      'acme',
      'vault',
      {
        'invoice-chaser/SKILL.md': skillMd(
          'invoice-chaser',
          'Chase overdue customer invoices with polite payment reminder emails',
        ),
      },
      { visibility: 'private' },
    );
    const message = 'customers owe us on overdue invoices, write payment reminders';
    await eventually(async () =>
      (await post(message, auth(tokens, 'reader')))
        .json()
        .results.some((r: { identity: string }) => r.identity === 'hub:acme/vault/invoice-chaser'),
    );
    const anonymous = (await post(message)).json();
    expect(anonymous.results.map((r: { identity: string }) => r.identity)).not.toContain(
      'hub:acme/vault/invoice-chaser',
    );
  });

  it('suggests a skill published in several repositories once, as its most-starred copy', async () => {
    // Two more copies of pdf-extract (same name and description): a fork whose body matches the message
    // best, and a starred mirror.
    const held = hub.app.suggestEngine.status().documents;
    const copy = (text: string) => ({
      'pdf-extract/SKILL.md': skillMd(
        'pdf-extract',
        'Extract text and tables from PDF files into markdown',
        body('pdf-extract', text),
      ),
    });
    await seedRepository(
      hub.db.db,
      'forker',
      'vendored',
      copy('Pull the tables out of PDF files into markdown with pdfplumber: tables, text, PDF files.'),
    );
    await seedRepository(hub.db.db, 'mirror', 'skills', copy('Use pdfplumber.'), { stars: 50 });
    const message = 'pull the tables out of these PDF files into markdown';
    const copies = [
      'gh:devtools/skills/pdf-extract',
      'gh:forker/vendored/pdf-extract',
      'gh:mirror/skills/pdf-extract',
    ];
    // Every copy reaches the reranker once the model and the search engine hold the new ones.
    await eventually(async () => {
      await post(message); // a suggestion reads the change feed first after a write
      const page = await hub.app.inject({ url: '/v1/search?q=pdf-extract' });
      const searched = page.json().results.map((r: { identity: string }) => r.identity);
      return (
        hub.app.suggestEngine.status().documents === held + 2 && copies.every((id) => searched.includes(id))
      );
    });
    const answer = (await post(message, {}, 5)).json();
    const identities: string[] = answer.results.map((r: { identity: string }) => r.identity);
    // One copy, first (the skill's place is its best copy's), shown as the starred one.
    expect(identities.filter((id) => copies.includes(id))).toEqual(['gh:mirror/skills/pdf-extract']);
    expect(identities[0]).toBe('gh:mirror/skills/pdf-extract');
    expect(answer.results[0].stars).toBe(50);
    expect(message).toContain(answer.results[0].matched);
    // Every result is a different skill to the reader.
    const shown = answer.results.map(
      (r: { name: string; description: string }) => `${r.name}|${r.description}`,
    );
    expect(new Set(shown).size).toBe(shown.length);
  });

  it('counts suggestions and batch resolves as reads: only a write makes the next suggestion read the change feed first', async () => {
    const noted = vi.spyOn(hub.app.suggestEngine, 'noteLocalWrite');
    try {
      expect((await post('write release notes from the commits since the last tag')).statusCode).toBe(200);
      const resolved = await hub.app.inject({
        method: 'POST',
        url: '/v1/resolve',
        payload: { items: [{ identity: 'gh:devtools/skills/release-notes' }] },
      });
      expect(resolved.statusCode).toBe(200);
      const reported = await hub.app.inject({
        method: 'POST',
        url: '/v1/skills/gh:devtools/skills/pdf-extract/reports',
        headers: auth(tokens, 'reader'),
        payload: { kind: 'malicious', note: 'a write, for this test' },
      });
      expect(reported.statusCode).toBe(201);
      // Response hooks run in request order: once the write's has run, the two reads' have too.
      await eventually(async () => noted.mock.calls.length > 0);
      expect(noted).toHaveBeenCalledTimes(1);
    } finally {
      noted.mockRestore();
    }
  });

  it('shows suggestions with their scores on the "describe your task" page', async () => {
    const empty = await hub.app.inject({ url: '/suggest' });
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('<textarea');
    const page = await hub.app.inject({
      url: `/suggest?q=${encodeURIComponent('write release notes from my git commits')}`,
    });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('release-notes');
    expect(page.body).toMatch(/score \d\.\d\d/);
    const none = await hub.app.inject({ url: `/suggest?q=${encodeURIComponent('thanks!')}` });
    expect(none.body).toContain('No skill fits');
    expect(none.body).toContain('href="/?q=thanks%21">Search the hub for these words</a>');
    expect(none.body).not.toContain('<script>');
  });

  it('takes a long message by POST on the page, refuses one over the limit rather than cut it, and keeps the limit', async () => {
    // The ask comes last, after 3,000 characters of pasted context (a GET link takes 2,000).
    const message = `${'context line with nothing to ask. '.repeat(90)}\nPlease write release notes from my git commits.`;
    const posted = await hub.app.inject({
      method: 'POST',
      url: '/suggest',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ q: message, limit: '1' }).toString(),
    });
    expect(posted.statusCode).toBe(200);
    expect(posted.body).toContain('release-notes');
    expect(posted.body.match(/<span class="score"/g)).toHaveLength(1);
    expect(posted.body).toContain('<input type="hidden" name="limit" value="1">');
    expect(posted.body).toContain('<form method="post" action="/suggest"');
    const longLink = await hub.app.inject({ url: `/suggest?q=${encodeURIComponent(message)}` });
    expect(longLink.statusCode).toBe(400);
    expect(longLink.body).toContain(
      'The message is longer than 2,000 characters; shorten it or send it through the form.',
    );
    const tooLong = await hub.app.inject({
      method: 'POST',
      url: '/suggest',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ q: `${'x '.repeat(4_000)}release notes` }).toString(),
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain('The message is longer than 8,000 characters; shorten it.');
    // The API keeps refusing a form body: only the page reads one.
    const api = await hub.app.inject({
      method: 'POST',
      url: '/v1/suggest',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'message=release+notes',
    });
    expect(api.statusCode).toBe(415);
    // Every page links the box.
    expect((await hub.app.inject({ url: '/' })).body).toContain('<a href="/suggest">Describe your task</a>');
    // A bad limit is named, as GET /v1/suggest answers 400 for it, not clamped without a word.
    for (const limit of ['0', '11', 'abc', '2.5']) {
      const bad = await hub.app.inject({ url: `/suggest?q=release+notes&limit=${limit}` });
      expect(bad.statusCode, limit).toBe(400);
      expect(bad.body).toContain('is not a whole number from 1 to 10');
      expect(bad.body).not.toContain('<span class="score"');
      expect((await hub.app.inject({ url: `/v1/suggest?q=release+notes&limit=${limit}` })).statusCode).toBe(
        400,
      );
    }
    // A NUL in the message is refused as a bad request, not as a bad identity.
    const nul = await hub.app.inject({ url: '/suggest?q=deploy%00failed' });
    expect(nul.statusCode).toBe(400);
    expect(nul.body).not.toContain('That identity is not valid');
  });

  it('says when to come back on the page while the model builds, and hides why a build failed', async () => {
    const building = vi
      .spyOn(hub.app.suggestEngine, 'suggest')
      .mockRejectedValueOnce(new SuggestUnavailableError('the suggestion model is still building', 30))
      .mockRejectedValueOnce(new SuggestUnavailableError('connect ECONNREFUSED 10.0.0.7:5432'));
    try {
      const page = await hub.app.inject({ url: '/suggest?q=release+notes+from+commits' });
      expect(page.statusCode).toBe(503);
      expect(page.headers['retry-after']).toBe('30');
      expect(page.body).toContain(
        'Suggestions are not available yet: the suggestion model is still building',
      );
      const failed = await hub.app.inject({ url: '/suggest?q=release+notes+from+commits' });
      expect(failed.statusCode).toBe(503);
      expect(failed.headers['retry-after']).toBeUndefined();
      expect(failed.body).toContain('Suggestions are not available on this hub right now.');
      expect(failed.body).not.toContain('ECONNREFUSED');
      expect(failed.body).toContain('<title>Suggestions unavailable');
    } finally {
      building.mockRestore();
    }
  });

  it('reports the model on /metrics', async () => {
    const text = (await hub.app.inject({ url: '/metrics' })).body;
    expect(text).toMatch(/^atskills_suggest_model_ready 1$/m);
    expect(Number(text.match(/^atskills_suggest_model_bytes (\d+)/m)?.[1])).toBeGreaterThan(0);
    expect(Number(text.match(/^atskills_suggest_model_documents (\d+)/m)?.[1])).toBeGreaterThanOrEqual(4);
    // Suggestions were answered above: what a turn takes is known.
    expect(Number(text.match(/^atskills_suggest_turn_ms ([\d.e+-]+)$/m)?.[1])).toBeGreaterThan(0);
    // And counted by outcome (the tests above answered, and abstained on small talk), with their best scores.
    const outcome = (name: string) =>
      Number(text.match(new RegExp(`^atskills_suggestions_total\\{outcome="${name}"\\} (\\d+)$`, 'm'))?.[1]);
    expect(outcome('answered')).toBeGreaterThan(0);
    expect(outcome('no_task')).toBeGreaterThanOrEqual(3);
    expect(Number(text.match(/^atskills_suggest_best_score_count (\d+)$/m)?.[1])).toBeGreaterThanOrEqual(
      outcome('answered'),
    );
  });

  it('answers 499 to a caller that left before its suggestion was computed', async () => {
    const skipped = vi
      .spyOn(hub.app.suggestEngine, 'suggest')
      .mockRejectedValueOnce(new SuggestAbandonedError());
    try {
      const res = await hub.app.inject({
        method: 'POST',
        url: '/v1/suggest',
        payload: { message: 'write release notes from my git commits' },
      });
      expect(res.statusCode).toBe(499);
      expect(res.body).toBe('');
      // The route hands the engine a signal of the caller leaving, and no deadline when none was asked.
      expect(skipped.mock.calls[0]?.[4]?.callerLeft).toBeInstanceOf(AbortSignal);
      expect(skipped.mock.calls[0]?.[4]?.deadline).toBeUndefined();
    } finally {
      skipped.mockRestore();
    }
  });

  it('hands the engine the deadline of atskills-timeout-ms, counted from when the request arrived', async () => {
    const seen = vi.spyOn(hub.app.suggestEngine, 'suggest');
    try {
      const before = performance.now();
      const res = await post('write release notes from my git commits', { 'atskills-timeout-ms': '800' });
      expect(res.statusCode).toBe(200);
      const deadline = seen.mock.calls[0]?.[4]?.deadline as number;
      expect(deadline).toBeGreaterThan(before + 700);
      expect(deadline).toBeLessThanOrEqual(performance.now() + 800);
    } finally {
      seen.mockRestore();
    }
  });

  it('answers 400 naming atskills-timeout-ms when it is not a whole number of milliseconds in range', async () => {
    for (const value of ['soon', '0', '2.5', '600001']) {
      const res = await post('write release notes', { 'atskills-timeout-ms': value });
      expect(res.statusCode, value).toBe(400);
      expect(res.json().detail, value).toContain('atskills-timeout-ms');
    }
    const get = await hub.app.inject({
      url: `/v1/suggest?q=${encodeURIComponent('write release notes')}`,
      headers: { 'atskills-timeout-ms': '-5' },
    });
    expect(get.statusCode).toBe(400);
  });

  it("answers 503 with Retry-After at once when the suggestions queued ahead outlast the caller's deadline", async () => {
    const messages = [
      'write release notes from my git commits since the last tag',
      'review my pull request for security problems',
      'make a pdf from this markdown report',
    ];
    const batch = () => messages.flatMap((m) => [post(m), post(m), post(m)]);
    // A first batch back to back teaches the hub how long a turn takes.
    for (const res of await Promise.all(batch())) expect(res.statusCode).toBe(200);
    const queued = batch();
    const hurried = post(messages[0]!, { 'atskills-timeout-ms': '1' });
    const patient = post(messages[1]!, { 'atskills-timeout-ms': '60000' });
    const refused = await hurried;
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ code: 'unavailable', retryAfterSeconds: 1 });
    expect(refused.json().detail).toContain('atskills-timeout-ms');
    // The others are answered as if it had not asked.
    for (const res of await Promise.all(queued)) expect(res.statusCode).toBe(200);
    expect((await patient).statusCode).toBe(200);
    const text = (await hub.app.inject({ url: '/metrics' })).body;
    expect(text).toMatch(/^atskills_suggest_queued 0$/m);
  });

  it('refuses an overloaded caller before reading its body (a body that is no JSON gets the 503, not a 400)', async () => {
    const refusal = vi
      .spyOn(hub.app.suggestEngine, 'refusal')
      .mockReturnValueOnce(new SuggestOverloadedError(40, 900));
    try {
      const res = await hub.app.inject({
        method: 'POST',
        url: '/v1/suggest',
        headers: { 'content-type': 'application/json', 'atskills-timeout-ms': '400' },
        payload: '{not json',
      });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toMatchObject({ code: 'unavailable', ahead: 40 });
      expect(res.json().detail).toContain(
        '40 suggestions are waiting ahead of this one, about 900 ms of work',
      );
      // The deadline it was asked about: 400 ms from when the request arrived.
      expect(refusal.mock.calls[0]?.[0]).toBeGreaterThan(performance.now() + 300);
      // Without the header the engine is not asked, and the body is read (and refused as such).
      const plain = await hub.app.inject({
        method: 'POST',
        url: '/v1/suggest',
        headers: { 'content-type': 'application/json' },
        payload: '{not json',
      });
      expect(plain.statusCode).toBe(400);
      expect(refusal).toHaveBeenCalledTimes(1);
    } finally {
      refusal.mockRestore();
    }
  });

  it('answers suggestions sent at once in the order they came (small talk at once), each as it answers alone', async () => {
    const messages = [
      'write release notes from my git commits since the last tag',
      'thanks, that worked',
      'review my pull request for security problems',
      'make a pdf from this markdown report',
    ];
    const ask = (message: string) =>
      hub.app.inject({ method: 'POST', url: '/v1/suggest', payload: { message, limit: 3 } });
    const alone = [];
    for (const message of messages) alone.push((await ask(message)).json());
    const finished: number[] = [];
    const together = await Promise.all(
      messages.map((message, i) =>
        ask(message).then((res) => {
          finished.push(i);
          return res.json();
        }),
      ),
    );
    expect(together).toEqual(alone);
    // What asks for nothing a skill of this hub is about (small talk; making a pdf, where its one pdf skill
    // extracts) needs no retrieval: it is answered at once, ahead of the suggestions that came before it.
    expect(together[1]).toEqual({ results: [], abstained: true });
    expect(together[3]).toEqual({ results: [], abstained: true });
    expect(finished).toEqual([1, 3, 0, 2]);
    const text = (await hub.app.inject({ url: '/metrics' })).body;
    expect(text).toMatch(/^atskills_suggest_queued 0$/m);
  });

  describe('on every agent path, against the running hub', () => {
    let hubUrl: string;
    let dir: string;
    const MESSAGE = 'write release notes from my git commits since the last tag';
    const env = (): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH,
      HOME: path.join(dir, 'home'),
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      ATSKILLS_CACHE: path.join(dir, 'cache'),
      ATSKILLS_HUB: hubUrl,
    });
    beforeAll(async () => {
      hubUrl = await hub.app.listen({ host: '127.0.0.1', port: 0 });
      dir = await mkdtemp(path.join(tmpdir(), 'atskills-suggest-'));
    });
    afterAll(async () => rm(dir, { recursive: true, force: true }));

    it('MCP tool suggest_skills: references with scores, and abstention', async () => {
      const client = new Client({ name: 'suggest-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`)));
      try {
        const { tools } = await client.listTools();
        const tool = tools.find((t) => t.name === 'suggest_skills');
        expect(tool?.description).toContain('score');
        const answer = (await client.callTool({
          name: 'suggest_skills',
          arguments: { message: MESSAGE },
        })) as ToolAnswer;
        expect(answer.isError).toBeFalsy();
        // Descriptions are third-party text: framed like every tool's.
        expect(answer.content[0]?.text).toMatch(/<skill-text-[0-9a-f]{16} kind="suggestions"/);
        expect(answer.structuredContent.abstained).toBe(false);
        expect(answer.structuredContent.results[0]).toMatchObject({
          reference: expect.stringContaining('gh:devtools/skills/release-notes'),
          score: expect.any(Number),
          source: 'gh',
          repository: 'devtools/skills',
          path: expect.stringContaining('release-notes'),
        });
        const none = (await client.callTool({
          name: 'suggest_skills',
          arguments: { message: 'thanks!' },
        })) as ToolAnswer;
        expect(none.structuredContent).toEqual({ results: [], abstained: true });
      } finally {
        await client.close();
      }
    });

    it('atskills suggest reads the message on stdin', async () => {
      const result = await runCliCaptured(['suggest', '--json', '--limit', '2'], {
        cwd: dir,
        env: env(),
        stdin: MESSAGE,
      });
      expect(result.code, result.stderr).toBe(0);
      const answer = parseJsonOutput<{ results: { identity: string }[]; abstained: boolean }>(result);
      expect(answer.abstained).toBe(false);
      expect(answer.results[0]!.identity).toBe('gh:devtools/skills/release-notes');
      expect(answer.results.length).toBeLessThanOrEqual(2);
      const plain = await runCliCaptured(['suggest'], { cwd: dir, env: env(), stdin: 'thanks, that worked' });
      expect(plain.stdout).toContain('No skill fits');
      expect(plain.stdout).toContain('atskills search');
      expect((await runCliCaptured(['suggest'], { cwd: dir, env: env(), stdin: '' })).code).toBe(2);
    });

    it('fetchSuggestions (for the prompt hook): results, [] on abstention, a down hub or a missed deadline', async () => {
      const got = await fetchSuggestions({ hubUrl }, MESSAGE, { limit: 1, deadlineMs: 5_000 });
      expect(got.map((r) => r.identity)).toEqual(['gh:devtools/skills/release-notes']);
      expect(await fetchSuggestions({ hubUrl }, 'thanks, that worked', { deadlineMs: 5_000 })).toEqual([]);
      const down = `http://127.0.0.1:${await unusedPort()}`;
      expect(await fetchSuggestions({ hubUrl: down }, MESSAGE, { deadlineMs: 2_000 })).toEqual([]);
      expect(await fetchSuggestions({ hubUrl }, MESSAGE, { deadlineMs: 0 })).toEqual([]);
    });
  });
});

describe('/v1/suggest on a hub that starts empty', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await createTestHub('suggest_empty', { SEARCH_ENGINE: 'memory' });
  });
  afterAll(() => hub?.close());

  const post = (message: string) =>
    hub.app.inject({ method: 'POST', url: '/v1/suggest', payload: { message } });

  it('abstains while no skill is indexed (the model builds over nothing), then suggests the first skills written', async () => {
    const empty = await post('the CI on my PR keeps failing on lint, pull the Actions logs and fix it');
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toMatchObject({ abstained: true, results: [] });
    await seedRepository(hub.db.db, 'devtools', 'skills', {
      'ci-fix/SKILL.md': skillMd(
        'ci-fix',
        'Fix failing GitHub Actions checks on a pull request: read the workflow logs, find the failing step, fix it',
        body('ci-fix', 'Pull the Actions run logs with gh run view, find the lint step that failed, fix it.'),
      ),
    });
    await eventually(async () =>
      (await post('the CI on my PR keeps failing on lint, pull the Actions logs and fix it'))
        .json()
        .results?.some((r: { identity: string }) => r.identity === 'gh:devtools/skills/ci-fix'),
    );
  });
});
