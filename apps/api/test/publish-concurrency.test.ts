import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, publish, seedTeam, type Tokens } from './teams-fixtures.js';

let hub: TestHub;
let tokens: Tokens;

beforeAll(async () => {
  hub = await createTestHub('publish_concurrency', { PUBLISH_CONCURRENCY: '1' });
  tokens = await seedTeam(hub.db.db, 'acme');
});

afterAll(async () => {
  await hub?.close();
});

describe('publishes at once (PUBLISH_CONCURRENCY)', () => {
  it('takes a slot only once the body has arrived: uploads that stall block no one', async () => {
    // Four publishes that sent their headers and stall: none of them holds or waits for the one slot, so
    // another team's publish goes through at once (before, they held it until the request timeout).
    const stalled = ['one', 'two', 'three', 'four'].map((name) => ({
      stream: new PassThrough(),
      archive: packCollection({ [`${name}/SKILL.md`]: skillMd(name, `Does ${name}.`) }),
      name,
    }));
    const answers = stalled.map(({ name, stream }) =>
      publish(hub.app, `acme/${name}`, stream, auth(tokens, 'publisher')),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const other = await publish(
      hub.app,
      'acme/other',
      packCollection({ 'other/SKILL.md': skillMd('other', 'Does other.') }),
      auth(tokens, 'publisher'),
    );
    expect(other.statusCode, other.body).toBe(200);
    // Their bodies arriving one by one, each is checked in turn (all at once would be a burst, next test).
    for (const [index, { stream, archive }] of stalled.entries()) {
      stream.end(archive);
      expect((await answers[index])?.statusCode).toBe(200);
    }
  });

  it('checks one at a time, lets PUBLISH_CONCURRENCY more wait and refuses the next with 503', async () => {
    // Three whole bodies at once: one is checked, one waits for the slot, the third is refused.
    const answers = ['six', 'seven', 'eight'].map((name) =>
      publish(
        hub.app,
        `acme/${name}`,
        packCollection({ [`${name}/SKILL.md`]: skillMd(name, `Does ${name}.`) }),
        auth(tokens, 'publisher'),
      ),
    );
    const settled = await Promise.all(answers);
    expect(settled.map((res) => res.statusCode).sort()).toEqual([200, 200, 503]);
    const refused = settled.find((res) => res.statusCode === 503);
    expect(refused?.headers['retry-after']).toBe('10');
    expect(refused?.json()).toMatchObject({ detail: expect.stringContaining('PUBLISH_CONCURRENCY') });
    // The slots came back: the next publish goes through at once.
    const again = await publish(
      hub.app,
      'acme/nine',
      packCollection({ 'nine/SKILL.md': skillMd('nine', 'Does nine.') }),
      auth(tokens, 'publisher'),
    );
    expect(again.statusCode).toBe(200);
  });

  it('gives the slot back when a publish is refused', async () => {
    const as = auth(tokens, 'publisher');
    // A skill without a description, a body that is not gzip: refused, each after taking the one slot.
    expect(
      (await publish(hub.app, 'acme/bad', packCollection({ 'bad/SKILL.md': '---\nname: bad\n---\n' }), as))
        .statusCode,
    ).toBe(422);
    expect((await publish(hub.app, 'acme/junk', Buffer.from('not a gzip'), as)).statusCode).toBe(400);
    expect(
      (
        await publish(
          hub.app,
          'acme/good',
          packCollection({ 'good/SKILL.md': skillMd('good', 'Is good.') }),
          as,
        )
      ).statusCode,
    ).toBe(200);
  });

  it('gives the slot back when a client leaves, waiting for it or holding it', async () => {
    await hub.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = hub.app.server.address() as AddressInfo;
    const headers = { 'content-type': 'application/gzip', ...auth(tokens, 'publisher') };
    /** A publish over HTTP; its body is sent at once, or later with `send`. */
    const start = (name: string, sendNow: boolean) => {
      const body = packCollection({ [`${name}/SKILL.md`]: skillMd(name, `Does ${name}.`) });
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: `/v1/collections/acme/${name}?visibility=private`,
        headers: { ...headers, 'content-length': String(body.length) },
      });
      const status = new Promise<number>((resolve) => {
        request.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        request.on('error', () => resolve(-1));
      });
      if (sendNow) request.end(body);
      else request.flushHeaders();
      return { request, status, send: () => request.end(body) };
    };
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
    const holder = start('holder', false);
    await settle();
    const waiter = start('waiter', false);
    await settle();
    waiter.request.destroy();
    await settle();
    holder.send();
    expect(await holder.status).toBe(200);
    expect(await waiter.status).toBe(-1);
    const leaver = start('leaver', false);
    await settle();
    leaver.request.destroy();
    expect(await leaver.status).toBe(-1);
    // Neither left a slot taken: the next publish is checked at once.
    expect(await start('after', true).status).toBe(200);
  });
});
