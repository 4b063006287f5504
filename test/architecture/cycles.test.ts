/**
 * No import cycles: the import graph of every workspace's `src/` (relative imports and `@atskills/*`
 * workspace imports resolved to files) has no strongly connected component of more than one file, and no
 * file imports itself.
 *
 * Type-only imports count. A cycle through types alone does not break module evaluation, but it still
 * means neither file can be read, tested or moved without the other; and the compiler erases an import
 * whose bindings are used only as types (`verbatimModuleSyntax` is off), so "type-only" is not a fact the
 * syntax tree states. Counting every import makes the rule one the parser can decide exactly.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, ROOT, sourceFiles } from './source-files.js';

/**
 * Cycles being removed elsewhere in the same round; each entry is a cycle's files, sorted, joined by
 * ' <-> '. Drop an entry once its fix is merged (the test fails while an entry names no cycle).
 */
// Cycles tolerated while they are being removed (none today); an entry must name a cycle that exists.
const KNOWN_CYCLES = new Set<string>([]);

interface Workspace {
  dir: string;
  name: string;
  exports: Record<string, unknown>;
}

const workspaceDirs = ['apps', 'packages'].flatMap((parent) =>
  sourceFiles(parent, { tests: true })
    .map((file) => file.split('/').slice(0, 2).join('/'))
    .filter((dir, i, all) => all.indexOf(dir) === i && existsSync(path.join(ROOT, dir, 'package.json'))),
);

const workspaces: Workspace[] = workspaceDirs.map((dir) => {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as {
    name: string;
    exports?: Record<string, unknown>;
  };
  return { dir, name: manifest.name, exports: manifest.exports ?? {} };
});

/** The source file (relative to the root) a specifier of `from` names, or undefined outside the workspaces. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    return existingSource(target);
  }
  const workspace = workspaces.find((w) => specifier === w.name || specifier.startsWith(`${w.name}/`));
  if (!workspace) return undefined;
  const subpath = `.${specifier.slice(workspace.name.length)}`;
  const entry = workspace.exports[subpath] as Record<string, string> | string | undefined;
  // Workspaces export their TypeScript sources under the "@atskills/source" condition (vitest.config.ts).
  const source = typeof entry === 'object' ? entry['@atskills/source'] : undefined;
  return source === undefined ? undefined : existingSource(path.posix.join(workspace.dir, source));
}

/** `x.js` written for `x.ts`, a bare `x` for `x.ts` or `x/index.ts`. */
function existingSource(target: string): string | undefined {
  const candidates = [
    target,
    target.replace(/\.js$/, '.ts'),
    `${target}.ts`,
    path.posix.join(target, 'index.ts'),
  ].filter((c) => c.endsWith('.ts'));
  return candidates.find((c) => existsSync(path.join(ROOT, c)));
}

/** The import graph of the non-test sources under `dirs`: file -> the files it imports. */
function importGraph(dirs: string[]): Map<string, string[]> {
  const files = dirs.flatMap((dir) => sourceFiles(dir));
  const inGraph = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .map((edge) => resolveImport(file, edge.specifier))
        .filter((target): target is string => target !== undefined && inGraph.has(target)),
    ]),
  );
}

/** The strongly connected components of `graph` (Tarjan's algorithm, iterative so deep chains cannot overflow). */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    // Each frame is a node and the position of the next successor to visit.
    const frames: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: string; edge: number };
      const successors = graph.get(frame.node) ?? [];
      if (frame.edge < successors.length) {
        const successor = successors[frame.edge++] as string;
        if (!index.has(successor)) {
          index.set(successor, next);
          low.set(successor, next++);
          stack.push(successor);
          onStack.add(successor);
          frames.push({ node: successor, edge: 0 });
        } else if (onStack.has(successor)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(successor) as number));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** Every cycle of `graph`, as its files sorted and joined by ' <-> ' (a self-import is a cycle of one). */
function cyclesOf(graph: Map<string, string[]>): string[] {
  return stronglyConnected(graph)
    .filter((c) => c.length > 1 || (graph.get(c[0] as string) ?? []).includes(c[0] as string))
    .map((c) => [...c].sort().join(' <-> '))
    .sort();
}

describe('no import cycles', () => {
  const graph = importGraph(workspaceDirs.map((dir) => `${dir}/src`));

  it('no workspace source file reaches itself through its imports', () => {
    const cycles = cyclesOf(graph);
    expect(cycles.filter((c) => !KNOWN_CYCLES.has(c))).toEqual([]);
    // An allow-list entry whose cycle is gone must be dropped, so the list cannot hide a new cycle later.
    expect([...KNOWN_CYCLES].filter((c) => !cycles.includes(c))).toEqual([]);
  });

  it('the graph resolves relative and workspace imports to files', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(resolveImport('apps/api/src/app.ts', '@atskills/queue')).toBe('packages/queue/src/index.ts');
    expect(resolveImport('apps/api/src/app.ts', '@atskills/protocol/node')).toBe(
      'packages/protocol/src/node/index.ts',
    );
    expect(resolveImport('apps/api/src/routes/v1/skills.ts', '../../services/skill-view.js')).toBe(
      'apps/api/src/services/skill-view.ts',
    );
    expect(resolveImport('apps/api/src/app.ts', 'fastify')).toBeUndefined();
  });

  it('Tarjan finds every cycle and nothing else', () => {
    const toy = new Map<string, string[]>([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', ['e']],
      ['e', []],
      ['f', ['f']],
      ['g', ['e']],
    ]);
    expect(cyclesOf(toy)).toEqual(['a <-> b <-> c', 'f']);
  });
});
