// The installable bundle (what GET /cli/atskills.tgz serves): no dependencies, and each command loads only
// what it needs. Which chunks a process loads is recorded by the module-log hook and each chunk is named by
// the packages esbuild put in it (its `// <path>` module comments), so the check is about which code loads,
// never about timing (the timing is `npm run bench -- client`).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../test/support/corpus.js';
import { bundleClient } from '../scripts/bundle.js';

const execFileAsync = promisify(execFile);
const HOOK = pathToFileURL(path.join(repoRoot, 'test', 'support', 'module-log.mjs')).href;
const HEAVY = ['node_modules/zod/', 'node_modules/yaml/', 'node_modules/tar/', 'node_modules/gpt-tokenizer/'];

let dir: string;
let pack: string;
let project: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-bundle-'));
  pack = path.join(dir, 'pack');
  await bundleClient(pack);
  project = path.join(dir, 'project');
  await mkdir(path.join(project, '.atskills', 'demo'), { recursive: true });
  await writeFile(
    path.join(project, '.atskills', 'demo', 'SKILL.md'),
    '---\nname: demo\ndescription: A local demo skill.\n---\ndemo body\n',
  );
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the bundled bin and returns its output and the packages inside every chunk it loaded. */
async function run(name: string, args: string[]) {
  const log = path.join(dir, `${name}.modules`);
  await writeFile(log, '');
  const { stdout } = await execFileAsync(process.execPath, [path.join(pack, 'bin', 'atskills.js'), ...args], {
    cwd: project,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      ATSKILLS_CACHE: path.join(dir, 'cache'),
      ATSKILLS_MODULE_LOG: log,
      NODE_OPTIONS: `--import=${HOOK}`,
    },
  });
  const chunks = (await readFile(log, 'utf8'))
    .split('\n')
    .filter((url) => url.startsWith('file:') && url.includes('/pack/dist/'));
  const contents = new Set<string>();
  for (const url of chunks) {
    const text = await readFile(fileURLToPath(url), 'utf8');
    for (const m of text.matchAll(/^\/\/ (\S+)$/gm)) contents.add(m[1]!);
  }
  return { stdout, chunks, contents: [...contents] };
}

describe('the bundled client package', () => {
  it('declares no dependencies and runs from its own files', async () => {
    const pkg = JSON.parse(await readFile(path.join(pack, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'atskills', bin: { atskills: 'bin/atskills.js' }, type: 'module' });
    expect(pkg.dependencies).toBeUndefined();
    const version = await run('version', ['--version']);
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it.each([
    ['--version', ['--version'], []],
    ['refs', ['refs', '--json', 'use @skills:gh:acme/kit/skills/a now'], []],
    // A project skill's frontmatter is parsed, so yaml loads; nothing else heavy does.
    ['get of a project skill', ['get', 'demo'], ['node_modules/yaml/']],
  ])('%s loads none of zod, tar or the tokenizer', async (name, args, allowed) => {
    const result = await run(name.replace(/\W+/g, '-'), args);
    expect(result.chunks.length).toBeGreaterThan(0);
    const heavy = HEAVY.filter((p) => !allowed.includes(p)).filter((p) =>
      result.contents.some((c) => c.includes(p)),
    );
    expect(heavy).toEqual([]);
  });

  it('loads the tokenizer for the prompt command, which counts tokens', async () => {
    await writeFile(path.join(project, '.atskills', '.autotrigger'), 'demo\n');
    const result = await run('prompt', ['prompt']);
    expect(result.stdout).toBe('- demo: A local demo skill. (demo)\n');
    expect(result.contents.some((c) => c.includes('node_modules/gpt-tokenizer/'))).toBe(true);
  });
});
