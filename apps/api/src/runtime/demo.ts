import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createUserWithNamespace, type Database, findUserByName } from '@atskills/db';
import { create as createTar } from 'tar';
import type { SearchEngine } from '../search/engine.js';
import type { Viewer } from '../services/auth/viewer.js';
import { DEFAULT_PUBLISH_LIMITS } from '../services/publish/limits.js';
import { type PublishAnswer, publishCollection } from '../services/publish/publish.js';

/** The repository's demo/ folder (the same relative place from src/runtime and dist/runtime). */
export const DEMO_DIR = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'demo');

/** The namespace the demo collections are published in: `hub:demo/<collection>`. */
export const DEMO_NAMESPACE = 'demo';

async function filesUnder(root: string, dir = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await filesUnder(root, rel)));
    else if (entry.isFile()) files.push(rel);
  }
  return files;
}

/** Packs a folder as the gzip tar a publisher would upload (files only, portable headers). */
async function packCollection(dir: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = createTar({ gzip: true, cwd: dir, portable: true }, await filesUnder(dir));
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Publishes every folder of demo/ as a public collection of the `demo` namespace, through the same publish
 * service as `PUT /v1/collections` (validation, safety scan, revisions), as the `demo` user. Idempotent:
 * unchanged content publishes to the same revision.
 */
export async function loadDemo(
  db: Database,
  options: { dir?: string; search?: SearchEngine; now?: Date; requestId?: string } = {},
): Promise<PublishAnswer[]> {
  const dir = options.dir ?? DEMO_DIR;
  const user =
    (await findUserByName(db, DEMO_NAMESPACE)) ??
    (await db.transaction(async (tx) => (await createUserWithNamespace(tx, { name: DEMO_NAMESPACE })).user));
  const viewer: Viewer = {
    userId: user.id,
    isAdmin: false,
    scopes: ['read', 'publish'],
    readableNamespaces: [DEMO_NAMESPACE],
    tokenId: null,
    userName: user.name,
    roles: { [DEMO_NAMESPACE]: 'owner' },
  };
  const collections = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const answers: PublishAnswer[] = [];
  for (const collection of collections) {
    const answer = await publishCollection(db, {
      viewer,
      namespace: DEMO_NAMESPACE,
      collection,
      requestId: options.requestId ?? 'demo-load',
      now: options.now ?? new Date(),
      visibility: 'public',
      body: await packCollection(path.join(dir, collection)),
      limits: DEFAULT_PUBLISH_LIMITS,
    });
    await options.search?.index(answer.skills);
    answers.push(answer);
  }
  return answers;
}
