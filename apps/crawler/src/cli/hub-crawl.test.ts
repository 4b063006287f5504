import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crawlThroughHub, HubCrawlError, repositoryStatusThroughHub } from './hub-crawl.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A stand-in hub on a free port answering every request with `handle`; its URL. */
async function hub(handle: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handle);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('crawlThroughHub', () => {
  it('says the hub stopped, and which run, when its connection breaks mid-crawl', async () => {
    const socket = path.join(mkdtempSync(path.join(tmpdir(), 'atskills-hub-crawl-')), 'admin.sock');
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ event: 'started', runId: 7 })}\n`, () => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server!.listen(socket, resolve));
    const crawl = crawlThroughHub(
      socket,
      { kind: 'repos', source: { kind: 'repos', repos: ['acme/tools'] }, force: false, wait: true },
      () => {},
    );
    await expect(crawl).rejects.toBeInstanceOf(HubCrawlError);
    await expect(crawl).rejects.toThrow(/^the hub \(`npm start`\) stopped before crawl run 7 finished \(/);
  });
});

describe('repositoryStatusThroughHub', () => {
  it('reads a moved repository’s new name from the hub’s 301', async () => {
    const url = await hub((_req, res) => {
      res
        .writeHead(301, {
          location: 'http://127.0.0.1:8080/v1/repos/newco/platform',
          'content-type': 'application/problem+json',
        })
        .end(JSON.stringify({ code: 'moved', location: 'gh:newco/platform' }));
    });
    expect(await repositoryStatusThroughHub(url, 'acme', 'ops')).toEqual({
      movedTo: { owner: 'newco', name: 'platform' },
    });
  });
});
