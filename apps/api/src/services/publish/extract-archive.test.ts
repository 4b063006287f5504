import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import {
  fileEntry,
  gzip,
  packCollection,
  paxEntry,
  skillMd,
  tarEntry,
  tarOf,
} from '../../../../../test/fixtures/archives/make.js';
import { isHttpProblem } from '../../problems.js';
import { extractArchive } from './extract-archive.js';
import { DEFAULT_PUBLISH_LIMITS } from './limits.js';

const work = mkdtempSync(path.join(tmpdir(), 'atskills-extract-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function folder(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(work, 'c-'));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  return root;
}

async function refusal(body: Buffer, limits = DEFAULT_PUBLISH_LIMITS): Promise<string> {
  try {
    await extractArchive(body, limits);
  } catch (err) {
    if (isHttpProblem(err)) return err.code;
    throw err;
  }
  throw new Error('the archive was accepted');
}

const files = {
  'deploy/SKILL.md': skillMd('deploy', 'Deploy.'),
  'deploy/scripts/run.sh': '#!/bin/sh\n',
  '团队/部署/notes.md': 'CJK folders are fine\n',
};

describe('extractArchive accepts what real packers make', () => {
  it('GNU tar with ./ entries and directory entries', async () => {
    const root = folder(files);
    const body = execFileSync('tar', ['-czf', '-', '-C', root, '.']);
    const out = await extractArchive(body, DEFAULT_PUBLISH_LIMITS);
    expect([...out.files.keys()].sort()).toEqual(Object.keys(files).sort());
    expect(out.dirs.has('deploy/scripts')).toBe(true);
    expect(out.files.get('deploy/scripts/run.sh')?.toString()).toBe('#!/bin/sh\n');
  });

  it('the tar package (portable, gzip), long paths through pax headers', async () => {
    const long = `deep/${'x'.repeat(150)}/SKILL.md`;
    const root = folder({ ...files, [long]: skillMd('x'.repeat(60), 'Long path.') });
    const chunks: Buffer[] = [];
    const stream = create({ gzip: true, cwd: root, portable: true }, ['.']);
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
    const out = await extractArchive(Buffer.concat(chunks), DEFAULT_PUBLISH_LIMITS);
    expect(out.files.has(long)).toBe(true);
    expect(out.unpackedBytes).toBe([...out.files.values()].reduce((n, b) => n + b.length, 0));
  });

  it('the fixture packer, including pax paths', async () => {
    const out = await extractArchive(packCollection(files), DEFAULT_PUBLISH_LIMITS);
    expect(out.files.get('团队/部署/notes.md')?.toString()).toBe('CJK folders are fine\n');
  });
});

describe('extractArchive refuses', () => {
  it('paths that collide once Unicode is normalized, and a file that is also a folder', async () => {
    const nfc = 'ok/caf\u00e9.md';
    const nfd = 'ok/cafe\u0301.md';
    expect(await refusal(gzip(tarOf([fileEntry(nfc, 'a'), fileEntry(nfd, 'b')])))).toBe(
      'archive-case-collision',
    );
    expect(await refusal(gzip(tarOf([fileEntry('ok/a', 'file'), fileEntry('ok/a/b.md', 'under it')])))).toBe(
      'archive-duplicate-path',
    );
  });

  it('backslashes, empty segments and control characters', async () => {
    expect(await refusal(gzip(tarOf([fileEntry('ok\\..\\evil', 'x')])))).toBe('archive-unsafe-path');
    expect(await refusal(gzip(tarOf([fileEntry('ok//a.md', 'x')])))).toBe('archive-unsafe-path');
    expect(await refusal(gzip(tarOf([fileEntry('ok/a\u0007.md', 'x')])))).toBe('archive-unsafe-path');
  });

  it('a pax header that renames the next entry to an unsafe path', async () => {
    const body = gzip(
      tarOf([paxEntry({ path: '../../etc/passwd' }), tarEntry({ name: 'innocent.md', data: 'x' })]),
    );
    expect(await refusal(body)).toBe('archive-unsafe-path');
  });

  it('a global pax header that sets a path for every entry', async () => {
    const global = tarEntry({ name: 'pax_global_header', type: 'g', data: '21 path=/etc/passwd\n' });
    expect(await refusal(gzip(tarOf([global, fileEntry('ok/SKILL.md', 'x')])))).toBe('archive-bad-header');
  });

  it('an archive over the unpacked-size and file-count limits, from the header alone', async () => {
    const limits = { ...DEFAULT_PUBLISH_LIMITS, maxUnpackedBytes: 1000, maxFiles: 3 };
    // The header declares 5000 bytes; the data is never needed to refuse it.
    expect(
      await refusal(
        gzip(tarOf([tarEntry({ name: 'ok/a.md', size: 5000, data: '' })], { end: false })),
        limits,
      ),
    ).toBe('archive-too-large');
    const four = gzip(tarOf(['a', 'b', 'c', 'd'].map((n) => fileEntry(`ok/${n}.md`, n))));
    expect(await refusal(four, limits)).toBe('archive-too-many-files');
  });

  it('an empty body and an empty archive', async () => {
    expect(await refusal(Buffer.alloc(0))).toBe('archive-corrupt');
    expect(await refusal(gzip(Buffer.alloc(0)))).toBe('archive-truncated');
  });
});
