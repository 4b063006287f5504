import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create } from 'tar';
import { problem } from '../problems.js';

/**
 * Where `npm run build` leaves the bundled client package (apps/cli/scripts/bundle.ts): the same relative
 * place from apps/api/src/services and apps/api/dist/services.
 */
export const DEFAULT_CLIENT_PACKAGE_DIR = fileURLToPath(
  new URL('../../../cli/dist/package/', import.meta.url),
);

/** The client as an npm package tarball, stamped with the hub it is served from. */
export interface ClientTarball {
  bytes: Buffer;
  /** sha256 of the bytes, hex: the ETag. */
  sha256: string;
  version: string;
}

// Entries get one fixed time, so the same build and hub give the same bytes (and ETag) on every start.
const EPOCH = new Date('2000-01-01T00:00:00Z');

/**
 * Packs the bundled client folder into `package/...` (the layout `npm pack` makes) with `hub.json` added,
 * naming `hubUrl` as the installed client's default hub. Throws a 503 problem when the client is not built.
 */
export async function packClient(packageDir: string, hubUrl: string): Promise<ClientTarball> {
  let manifest: { version?: unknown };
  try {
    manifest = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as typeof manifest;
    await stat(path.join(packageDir, 'dist', 'main.js'));
  } catch {
    throw problem('unavailable', 'The atskills client is not built on this hub (run `npm run build`).');
  }
  const work = await mkdtemp(path.join(tmpdir(), 'atskills-client-pack-'));
  try {
    const root = path.join(work, 'package');
    await cp(packageDir, root, { recursive: true });
    await rm(path.join(root, 'hub.json'), { force: true });
    await writeFile(path.join(root, 'hub.json'), `${JSON.stringify({ hub: hubUrl })}\n`);
    const chunks: Buffer[] = [];
    const stream = create({ gzip: true, cwd: work, portable: true, mtime: EPOCH }, ['package']);
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    return {
      bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      version: typeof manifest.version === 'string' ? manifest.version : '0.0.0',
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
