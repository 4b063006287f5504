import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/corpus.js';

/** The folders the README's Layout block names (`packages/db/`, `bench/`, ...). */
function layoutFolders(): string[] {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('## Layout');
  const block = readme.slice(
    readme.indexOf('```', start) + 3,
    readme.indexOf('```', readme.indexOf('```', start) + 3),
  );
  return block
    .split('\n')
    .map((line) => /^(\S+\/)\s/.exec(line)?.[1])
    .filter((folder): folder is string => folder !== undefined);
}

const isFolder = (p: string) => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;

describe("the README's Layout section", () => {
  it('names every app and package, and only folders that exist', () => {
    const named = layoutFolders();
    expect(named.length).toBeGreaterThan(8);
    for (const folder of named) expect(isFolder(path.join(repoRoot, folder)), folder).toBe(true);
    const workspaces = ['apps', 'packages'].flatMap((parent) =>
      readdirSync(path.join(repoRoot, parent))
        .filter((name) => isFolder(path.join(repoRoot, parent, name)))
        .map((name) => `${parent}/${name}/`),
    );
    expect(workspaces.filter((w) => !named.includes(w))).toEqual([]);
  });
});
