import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createHubLogger, redactRequestUrl } from './logging.js';

/** A logger writing into a buffer; returns it and what it wrote so far. */
function capture(pretty: boolean) {
  const out = new PassThrough();
  let text = '';
  out.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  return { logger: createHubLogger('info', { pretty, destination: out }), text: () => text };
}

describe('createHubLogger', () => {
  it('writes JSON lines when not on a terminal, secrets redacted', () => {
    const { logger, text } = capture(false);
    logger.info({ part: 'search', mode: 'memory', token: 'ask_secret' }, 'search: in-memory index');
    const line = JSON.parse(text().trim());
    expect(line).toMatchObject({ level: 30, part: 'search', mode: 'memory', token: '[redacted]' });
    expect(line.msg).toBe('search: in-memory index');
  });

  it('writes one readable line per entry on a terminal: request in a few words, secrets redacted', () => {
    const { logger, text } = capture(true);
    logger.info({ part: 'database', mode: 'embedded' }, 'database: embedded Postgres');
    logger.info(
      { reqId: 'req-1', req: { method: 'GET', url: '/v1/search?q=pdf&token=abc' } },
      'incoming request',
    );
    logger.info({ reqId: 'req-1', res: { statusCode: 200 }, responseTime: 3.14 }, 'request completed');
    logger.warn({ token: 'ask_secret' }, 'careful');
    const lines = text().trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: database: embedded Postgres \{.*"mode":"embedded"/,
    );
    expect(lines[1]).toContain('INFO: incoming request: GET /v1/search?q=pdf&token=[redacted]');
    expect(lines[1]).toContain('"reqId":"req-1"');
    expect(lines[2]).toContain('INFO: request completed: 200 in 3.1 ms');
    expect(lines[3]).toContain('WARN: careful');
    expect(text()).not.toContain('ask_secret');
    expect(text()).not.toMatch(/^\{/m);
  });
});

describe('redactRequestUrl', () => {
  it('replaces any credential-named parameter and GitHub tokens wherever they appear', () => {
    const gh = `ghp_${'a1'.repeat(18)}`;
    const url = `/v1/search?q=x&github_token=${gh}&password=hunter22&client_secret=s&apiKey=k&next=${gh}`;
    const redacted = redactRequestUrl(url);
    expect(redacted).toBe(
      '/v1/search?q=x&github_token=[redacted]&password=[redacted]&client_secret=[redacted]&apiKey=[redacted]&next=[redacted]',
    );
    // Words that merely contain a credential's name elsewhere are kept.
    expect(redactRequestUrl('/v1/search?q=token+rotation&keyword=x')).toBe(
      '/v1/search?q=token+rotation&keyword=x',
    );
  });
});
