/**
 * The one-command start: `server.ts` in a child process with nothing configured (no DATABASE_URL,
 * REDIS_URL, MEILI_URL) and a clean data folder, loading the demo skills; then search, resolution,
 * readiness and metrics against it, and a SIGTERM that arrives while a request is still being received.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedHubEnv } from '../../../test/support/hub-process.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const SKILL = 'hub:demo/devops/deploy-checklist';

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

describe('embedded mode from a clean folder', () => {
  let tempDir: string;
  let dataDir: string;
  let child: ChildProcess;
  let baseUrl: string;
  const logs: LogLine[] = [];
  const waiters: { test: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  let exited: Promise<number | null>;

  /** Resolves with the first log line (past or future) that passes `test`. */
  const logLine = (test: (line: LogLine) => boolean) =>
    new Promise<LogLine>((resolve) => {
      const seen = logs.find(test);
      if (seen) resolve(seen);
      else waiters.push({ test, resolve });
    });

  beforeAll(async () => {
    tempDir = await mkdtemp(path.join(tmpdir(), 'atskills-embedded-'));
    // Not created beforehand: a fresh clone has no .data folder either.
    dataDir = path.join(tempDir, '.data');
    child = spawn(
      process.execPath,
      ['--conditions=@atskills/source', '--import', 'tsx', 'apps/api/src/server.ts', '--demo'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          // Nothing configured; the Prometheus series are checked anonymously below (by default only
          // administrators see them).
          ...embeddedHubEnv(dataDir, { METRICS_PUBLIC: 'true' }),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const text of lines) {
        if (!text.startsWith('{')) continue;
        const line = JSON.parse(text) as LogLine;
        logs.push(line);
        for (const waiter of waiters.filter((w) => w.test(line))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const started = await Promise.race([
      logLine((line) => line.msg.startsWith('hub listening on')),
      exited.then((code) => {
        throw new Error(`server exited with ${code} before listening: ${stderr}`);
      }),
    ]);
    baseUrl = started.url as string;
  }, 300_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await rm(tempDir, { recursive: true, force: true });
  });

  it('says first which mode each part runs in and where its data lives', () => {
    const [database, queue, search] = logs;
    expect(database).toMatchObject({
      part: 'database',
      mode: 'embedded',
      location: path.join(dataDir, 'db'),
    });
    expect(queue).toMatchObject({ part: 'queue', mode: 'in-process' });
    // The true default engine (plugins/search.ts): the in-memory index, not Postgres.
    expect(search).toMatchObject({ part: 'search', mode: 'memory', location: 'memory' });
    expect(existsSync(path.join(dataDir, 'db'))).toBe(true);
    expect(logs.find((l) => l.part === 'demo')).toMatchObject({
      collections: ['hub:demo/data', 'hub:demo/devops', 'hub:demo/writing'],
      skills: 12,
    });
  });

  it('is ready, with each dependency named', async () => {
    const response = await fetch(`${baseUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      checks: {
        database: { status: 'up', mode: 'embedded' },
        migrations: { status: 'up' },
        // The in-memory engine is the default; the demo's documents are loaded by the time the hub is ready.
        search: {
          status: 'up',
          engine: 'memory',
          detail: expect.stringMatching(/^\d+ documents in memory$/),
        },
        queue: { status: 'up', mode: 'in-process' },
      },
    });
  });

  it('searches the demo skills', async () => {
    const response = await fetch(`${baseUrl}/search?q=deploy`);
    expect(response.status).toBe(200);
    const { results } = (await response.json()) as { results: { identity: string }[] };
    expect(results.map((r) => r.identity)).toContain(SKILL);
  });

  it('suggests the demo skill a short request asks for, and nothing for thanks', async () => {
    // The suggestion model builds after the search index: 503 with Retry-After until it is ready.
    const suggest = async (message: string) => {
      for (let attempt = 0; ; attempt++) {
        const response = await fetch(`${baseUrl}/v1/suggest?q=${encodeURIComponent(message)}`);
        if (response.status !== 503 || attempt === 100) {
          expect(response.status).toBe(200);
          return (await response.json()) as { results: { identity: string }[]; abstained: boolean };
        }
        await sleep(100);
      }
    };
    // Two of the 12 skills are about "release": in a hub this small it still tells (abstain.ts, isTelling).
    const changelog = await suggest('write the changelog for the new release');
    expect(changelog.abstained).toBe(false);
    expect(changelog.results[0]?.identity).toBe('hub:demo/writing/changelog');
    // Two telling words, but the request names the skill whole (abstain.ts, taskPrior).
    const notes = await suggest('draft release notes for v2.3');
    expect(notes.results[0]?.identity).toBe('hub:demo/writing/release-notes');
    expect(await suggest('thanks, that worked')).toEqual({ results: [], abstained: true });
  });

  it('resolves a demo skill with revision headers and in a batch', async () => {
    const first = await fetch(`${baseUrl}/v1/skills/${SKILL}`);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(((await first.json()) as { name: string }).name).toBe('deploy-checklist');
    const again = await fetch(`${baseUrl}/v1/skills/${SKILL}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const batch = await fetch(`${baseUrl}/v1/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ identity: SKILL, revision: etag.slice(1, -1) }] }),
    });
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as { items: { status: string }[] }).items[0]?.status).toBe('unchanged');
  });

  it('exposes the named Prometheus series', async () => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    for (const series of [
      'atskills_http_request_duration_seconds',
      'atskills_search_duration_seconds',
      'atskills_cache_validations_total',
      'atskills_crawl_jobs_total',
      'atskills_queue_jobs',
      'atskills_github_rate_limit_remaining',
    ]) {
      expect(text).toContain(`# TYPE ${series} `);
    }
    expect(text).toMatch(
      /atskills_http_request_duration_seconds_count\{method="GET",route="\/search",status="200"\} \d/,
    );
    expect(text).toMatch(/atskills_search_duration_seconds_count\{engine="memory"\} [1-9]/);
    expect(text).toContain('atskills_cache_validations_total{outcome="304"} 1');
    expect(text).toContain('atskills_queue_jobs{queue="crawl-repository",state="waiting"} 0');
  });

  it('finishes a request still being received when SIGTERM arrives, then exits cleanly', async () => {
    const body = JSON.stringify({ items: [{ identity: SKILL }] });
    const { port } = new URL(baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    const ended = new Promise<void>((resolve) => socket.on('end', resolve));
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    // Expect: 100-continue makes the server confirm it holds the request before the body is sent.
    socket.write(
      [
        'POST /v1/resolve HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Expect: 100-continue',
        '',
        '',
      ].join('\r\n'),
    );
    await new Promise<void>((resolve) => {
      const check = () => (received.includes('100 Continue') ? resolve() : socket.once('data', check));
      check();
    });
    child.kill('SIGTERM');
    await logLine((line) => line.msg === 'shutting down');
    socket.end(body);
    await ended;
    const [head, json] = received.slice(received.indexOf('\r\n\r\n') + 4).split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(JSON.parse(json!)).toMatchObject({
      items: [{ identity: SKILL, status: 'changed', kind: 'skill' }],
    });
    expect(await exited).toBe(0);
    expect(logs.at(-1)).toMatchObject({ msg: 'shut down', reason: 'SIGTERM' });
  });
});
