import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { githubSlug, headingAnchors, markdownLinks } from './markdown.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The pages a reader moves between: the front door, the task pages, and the notes they point into. */
const PAGES = [
  'README.md',
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  ...['apps', 'packages'].flatMap((dir) =>
    readdirSync(path.join(ROOT, dir))
      .map((name) => `${dir}/${name}/README.md`)
      .filter((file) => existsSync(path.join(ROOT, file))),
  ),
];

/** A link that leaves the repository (a web address, mail) is not ours to check. */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/** Every relative link and anchor of `file` that does not resolve, as `file:line target (why)`. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const broken: string[] = [];
  for (const { target, line } of markdownLinks(text)) {
    if (isExternal(target)) continue;
    const [pathPart = '', anchor] = target.split('#', 2);
    const resolved =
      pathPart === '' ? path.join(ROOT, file) : path.resolve(ROOT, path.dirname(file), decodeURI(pathPart));
    if (!resolved.startsWith(ROOT)) {
      broken.push(`${file}:${line} ${target} (outside the repository)`);
      continue;
    }
    if (!existsSync(resolved)) {
      broken.push(`${file}:${line} ${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md')) {
      const anchors = headingAnchors(readFileSync(resolved, 'utf8'));
      if (!anchors.has(decodeURIComponent(anchor)))
        broken.push(`${file}:${line} ${target} (no such heading)`);
    }
  }
  return broken;
}

describe('documentation links', () => {
  it('makes anchors the way GitHub does', () => {
    expect(githubSlug('The `atskills` client')).toBe('the-atskills-client');
    expect(githubSlug('On-demand `gh:`')).toBe('on-demand-gh');
    expect(githubSlug('Accounts, roles and tokens')).toBe('accounts-roles-and-tokens');
    expect(githubSlug('Client (`atskills`)')).toBe('client-atskills');
    expect(githubSlug('[docs/cli.md](docs/cli.md) pages')).toBe('docsclimd-pages');
    expect([...headingAnchors('# A\n```\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1']);
  });

  it('finds links outside code only', () => {
    const links = markdownLinks('see [a](a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n![img](i.png "t")\n');
    expect(links.map((l) => l.target)).toEqual(['a.md#x', 'i.png']);
  });

  it.each(PAGES)('every relative link and anchor of %s resolves', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('checks the front door and every task page', () => {
    expect(PAGES).toContain('README.md');
    expect(PAGES.filter((p) => p.startsWith('docs/')).length).toBeGreaterThanOrEqual(13);
  });
});
