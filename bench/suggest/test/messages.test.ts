/** The suggestion message set stays valid as it is edited: every judgement resolves to a corpus skill. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkMessages,
  defaultMessagesPath,
  loadMessages,
  MESSAGE_KINDS,
  messageSetName,
  readMessageFile,
} from '../messages.js';

describe('bench/suggest/messages.json', () => {
  it('judges only corpus skills, with unique ids and at least the minimum of every kind', async () => {
    const report = await checkMessages();
    expect(report.errors).toEqual([]);
    expect(report.shortfalls).toEqual([]);
  });

  it('loads with aliases expanded to identities and every need of a multi message among its relevant skills', () => {
    const messages = loadMessages();
    for (const m of messages) {
      expect(MESSAGE_KINDS).toContain(m.kind);
      for (const id of m.relevant) expect(id).toMatch(/^gh:[^/]+\/[^/]+\//);
      if (m.kind === 'multi') {
        expect(m.needs?.length).toBeGreaterThanOrEqual(2);
        expect(new Set(m.needs?.flat())).toEqual(new Set(m.relevant));
      }
    }
    expect(messages.filter((m) => m.kind === 'none').every((m) => m.relevant.length === 0)).toBe(true);
  });

  it('rejects a pooled entry that is not among the relevant skills of its message', async () => {
    const data = readMessageFile();
    const target = data.messages.find((m) => m.pooled?.length)!;
    target.relevant = target.relevant.filter((e) => e !== target.pooled![0]);
    if (target.needs) target.needs = target.needs.map((n) => n.filter((e) => e !== target.pooled![0]));
    const dir = mkdtempSync(path.join(tmpdir(), 'suggest-messages-'));
    const file = path.join(dir, 'messages.json');
    writeFileSync(file, JSON.stringify(data));
    const report = await checkMessages(file).finally(() => rmSync(dir, { recursive: true }));
    expect(report.errors).toEqual([
      expect.stringMatching(new RegExp(`^message ${target.id}: pooled gh:\\S+ not in relevant$`)),
    ]);
  });

  it('names the results of another message set apart from the judged set', () => {
    expect(messageSetName(defaultMessagesPath())).toBe('');
    expect(messageSetName('bench/suggest/messages.short.json')).toBe('short');
    expect(messageSetName('/tmp/messages.foreign.json')).toBe('foreign');
  });
});
