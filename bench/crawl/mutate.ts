/**
 * The re-crawl's upstream change: in a share of the corpus's repositories, one new commit (through
 * `git fast-import`, on top of the branch) that edits one skill, adds one and deletes one - what a busy
 * skills repository does between two crawls.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { GeneratedRepo } from '../corpus/generate.js';
import { Rng } from '../lib/rng.js';

export interface MutationSummary {
  repositories: string[];
  edited: number;
  added: number;
  deleted: number;
  /** Bytes of the SKILL.md files written (what a perfect crawler must download). */
  changedBytes: number;
}

const gitEnv = (dir: string) => ({ ...process.env, GIT_DIR: dir, GIT_CONFIG_GLOBAL: '/dev/null' });

/** Skill folders of the branch head (folders holding SKILL.md at any depth; the leaf rule does not matter here). */
function skillFoldersAtHead(dir: string): string[] {
  const out = execFileSync('git', ['ls-tree', '-r', '--name-only', '-z', 'main'], {
    env: gitEnv(dir),
    maxBuffer: 256 * 1024 * 1024,
  }).toString('utf8');
  return out
    .split('\0')
    .filter((p) => /(^|\/)SKILL\.md$/.test(p) && !p.includes('/inner/'))
    .map((p) => path.posix.dirname(p));
}

/** Appends one commit editing, adding and deleting a skill in `share` of the repositories (at least one). */
export function mutateCorpus(
  reposRoot: string,
  repos: GeneratedRepo[],
  options: { share: number; seed: number },
): MutationSummary {
  const rng = new Rng(options.seed);
  const count = Math.max(1, Math.round(repos.length * options.share));
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(rng.int(0, repos.length - 1));
  const summary: MutationSummary = { repositories: [], edited: 0, added: 0, deleted: 0, changedBytes: 0 };
  for (const i of [...chosen].sort((a, b) => a - b)) {
    const r = repos[i]!;
    const dir = path.join(reposRoot, r.owner, `${r.repo}.git`);
    const folders = skillFoldersAtHead(dir);
    if (folders.length === 0) continue;
    const stamp = `${Date.now()}-${rng.int(0, 1e9)}`;
    const edit = rng.pick(folders);
    const old = execFileSync('git', ['show', `main:${edit}/SKILL.md`], { env: gitEnv(dir) }).toString('utf8');
    const edited = `${old}\nRevised guidance (${stamp}): check the inputs before running the steps.\n`;
    const addedName = `bench-added-${stamp}`;
    const addedFolder = path.posix.join(path.posix.dirname(edit), addedName);
    const added = `---\nname: ${addedName}\ndescription: A skill added between two crawls (${stamp}).\n---\n# ${addedName}\n\nSteps.\n`;
    const remaining = folders.filter((f) => f !== edit);
    const removed = remaining.length > 0 ? rng.pick(remaining) : null;
    const message = `bench: change skills (${stamp})`;
    const seconds = Math.floor(Date.now() / 1000);
    let stream = `commit refs/heads/main\ncommitter bench <bench@example.invalid> ${seconds} +0000\ndata ${Buffer.byteLength(message)}\n${message}\nfrom refs/heads/main^0\n`;
    const file = (p: string, content: string) =>
      `M 100644 inline ${p}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
    stream += file(`${edit}/SKILL.md`, edited);
    stream += file(`${addedFolder}/SKILL.md`, added);
    if (removed) stream += `D ${removed}\n`;
    const result = spawnSync('git', ['fast-import', '--quiet'], { env: gitEnv(dir), input: `${stream}\n` });
    if (result.status !== 0) throw new Error(`fast-import failed in ${dir}: ${result.stderr.toString()}`);
    summary.repositories.push(`${r.owner}/${r.repo}`);
    summary.edited++;
    summary.added++;
    if (removed) summary.deleted++;
    summary.changedBytes += Buffer.byteLength(edited) + Buffer.byteLength(added);
  }
  return summary;
}
