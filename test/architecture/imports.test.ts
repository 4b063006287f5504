/**
 * The dependency rules of ARCHITECTURE.md, checked on the import statements of the whole tree (static,
 * dynamic and `import('x').T` types, parsed with the TypeScript compiler).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ImportEdge, importsOf, isTestFile, ROOT, sourceFiles } from './source-files.js';

interface Workspace {
  dir: string;
  name: string;
}

const workspaces: Workspace[] = ['apps/api', 'apps/cli', 'apps/crawler', ...packageDirs()].map((dir) => ({
  dir,
  name: (JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as { name: string }).name,
}));
const apps = workspaces.filter((w) => w.dir.startsWith('apps/'));

function packageDirs(): string[] {
  return sourceFiles('packages', { tests: true })
    .map((file) => file.split('/').slice(0, 2).join('/'))
    .filter((dir, i, all) => all.indexOf(dir) === i);
}

/** The workspace a file belongs to. */
function workspaceOf(file: string): Workspace | undefined {
  return workspaces.find((w) => file.startsWith(`${w.dir}/`));
}

/** The repository path a relative specifier points at, or undefined for a package specifier. */
function resolved(file: string, edge: ImportEdge): string | undefined {
  if (!edge.specifier.startsWith('.')) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(file), edge.specifier));
}

/** The workspace an import reaches: by package name (`@atskills/db/x`) or by a relative path into it. */
function targetOf(file: string, edge: ImportEdge): Workspace | undefined {
  const target = resolved(file, edge);
  if (target !== undefined) return workspaces.find((w) => target.startsWith(`${w.dir}/`));
  return workspaces.find((w) => edge.specifier === w.name || edge.specifier.startsWith(`${w.name}/`));
}

/** Fastify itself, its plugins (`@fastify/*`, `fastify-*`) and type providers. */
function isFastifyModule(specifier: string): boolean {
  return /^(?:fastify(?:-[a-z-]+)?|@fastify\/[a-z-]+)(?:\/|$)/.test(specifier);
}

/** `file:line -> specifier` for every import of `files` that `broken` says breaks the rule. */
function violations(files: string[], broken: (file: string, edge: ImportEdge) => boolean): string[] {
  return files.flatMap((file) =>
    importsOf(file)
      .filter((edge) => broken(file, edge))
      .map((edge) => `${file}:${edge.line} -> ${edge.specifier}`),
  );
}

describe('dependency rules (ARCHITECTURE.md)', () => {
  it('the protocol core imports no node: module (only src/node/ and the src/content/ entry may)', () => {
    // `@atskills/protocol/content` (a folder's files -> an indexed skill) runs in the hub and the crawler
    // only, behind its own entry, and hashes with node:crypto; everything else must stay pure.
    const core = sourceFiles('packages/protocol/src').filter(
      (f) => !f.startsWith('packages/protocol/src/node/') && !f.startsWith('packages/protocol/src/content/'),
    );
    expect(core.length).toBeGreaterThan(10);
    const found = violations(core, (file, edge) => {
      if (edge.typeOnly) return false;
      const target = resolved(file, edge);
      return edge.specifier.startsWith('node:') || target?.startsWith('packages/protocol/src/node/') === true;
    });
    expect(found).toEqual([]);
  });

  it('routes and web pages import nothing from @atskills/db (they call services)', () => {
    const files = [...sourceFiles('apps/api/src/routes'), ...sourceFiles('apps/api/src/web')];
    expect(files.length).toBeGreaterThan(10);
    expect(
      violations(files, (_file, edge) => edge.specifier.split('/').slice(0, 2).join('/') === '@atskills/db'),
    ).toEqual([]);
  });

  it('no app imports another app, and no package imports an app', () => {
    const files = [...sourceFiles('apps', { tests: true }), ...sourceFiles('packages', { tests: true })];
    const found = violations(files, (file, edge) => {
      const from = workspaceOf(file);
      const to = targetOf(file, edge);
      return from !== undefined && to !== undefined && to !== from && apps.includes(to);
    });
    expect(found).toEqual([]);
  });

  it('services and search import no Fastify plugin and no Fastify type', () => {
    // Rule 4: services are plain functions over a database and a viewer. Types they share with the
    // plugins (a request's caller, a logger) are written beside the services, which a Fastify object fits.
    const files = [...sourceFiles('apps/api/src/services'), ...sourceFiles('apps/api/src/search')];
    expect(files.length).toBeGreaterThan(10);
    const found = violations(
      files,
      (file, edge) =>
        resolved(file, edge)?.startsWith('apps/api/src/plugins/') === true || isFastifyModule(edge.specifier),
    );
    expect(found).toEqual([]);
    expect(
      ['fastify', 'fastify-plugin', '@fastify/rate-limit', 'fastify-type-provider-zod'].every(
        isFastifyModule,
      ),
    ).toBe(true);
    expect(isFastifyModule('fast-json-stringify')).toBe(false);
  });

  it('the checks see the imports they judge', () => {
    // A rule over an empty edge list would pass vacuously: make sure the parser finds real edges.
    const edges = importsOf('apps/api/src/routes/v1/skills.ts');
    expect(edges.some((e) => e.specifier === '../../services/skill-view.js')).toBe(true);
    expect(
      targetOf('apps/api/src/app.ts', { specifier: '@atskills/queue', line: 1, typeOnly: false })?.dir,
    ).toBe('packages/queue');
    expect(isTestFile('apps/api/test/http-api.test.ts')).toBe(true);
    expect(
      importsOf('packages/protocol/src/node/cache.ts').some((e) => e.specifier.startsWith('node:')),
    ).toBe(true);
    const intoApp = { specifier: '../../crawler/src/config.js', line: 1, typeOnly: false };
    expect(targetOf('apps/api/test/crawled-index.test.ts', intoApp)?.dir).toBe('apps/crawler');
  });
});
