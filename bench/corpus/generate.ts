/**
 * Generates a synthetic skills corpus at the public corpus's scale (default 56,804 skills in 1,133
 * repositories) as bare git repositories for the GitHub stand-in, deterministically from a seed. Its
 * distributions (description and body lengths, word frequencies, skills per repository with a long
 * tail, nesting, frontmatter variety, a share of broken files) are fitted to ../shared/corpus, with the
 * medians scaled to the public corpus's (description ~150 characters, body ~900 words).
 * Repositories are written with `git fast-import`, which builds a 50k-file history in seconds.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Rng } from '../lib/rng.js';
import { median } from '../lib/stats.js';
import type { CorpusFit } from './fit.js';

export interface GenerateOptions {
  skills: number;
  repos: number;
  /** Skills in the largest repository. */
  largest: number;
  seed: number;
  descriptionMedian: number;
  bodyMedianWords: number;
  outDir: string;
  /**
   * Instead of writing a bare git repository per repository, hand its files here (`bench -- load` writes
   * them straight into the index tables; the crawl itself is benchmarked separately).
   */
  onRepo?: (repo: GeneratedRepo, files: Map<string, string>) => Promise<void>;
}

export interface GeneratedRepo {
  owner: string;
  repo: string;
  defaultBranch: string;
  stars: number;
  license: string | null;
  pushedAt: string;
  topics: string[];
  /** Skill folders by the leaf rule (exact SKILL.md, nested ones folded). */
  skills: string[];
  /** Bytes of all files inside skill folders (what a crawler must download at least). */
  skillFolderBytes: number;
  /** Bytes of every file in the repository (what a full clone downloads before compression). */
  totalBytes: number;
}

export interface GeneratedCorpus {
  seed: number;
  skills: number;
  repos: GeneratedRepo[];
  reposRoot: string;
}

/** Skills per repository: a Zipf-like long tail with the given total, count and maximum. */
export function skillsPerRepo(total: number, repos: number, largest: number): number[] {
  const shape = (a: number) =>
    Array.from({ length: repos }, (_, i) => Math.max(1, Math.round(largest / (i + 1) ** a)));
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  let lo = 0.1;
  let hi = 3;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (sum(shape(mid)) > total) lo = mid;
    else hi = mid;
  }
  const counts = shape(hi);
  // Spread the rounding remainder over the mid-sized repositories so the total is exact.
  let diff = total - sum(counts);
  for (let i = 1; diff !== 0; i = (i % (repos - 1)) + 1) {
    const step = diff > 0 ? 1 : -1;
    if (counts[i]! + step >= 1) {
      counts[i]! += step;
      diff -= step;
    }
  }
  return counts;
}

class WordSampler {
  private readonly words: string[];
  private readonly cumulative: number[];

  constructor(vocabulary: [string, number][]) {
    this.words = vocabulary.map(([w]) => w);
    let acc = 0;
    this.cumulative = vocabulary.map(([, c]) => {
      acc += c;
      return acc;
    });
  }

  word(rng: Rng): string {
    const total = this.cumulative[this.cumulative.length - 1]!;
    const x = rng.next() * total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }

  /** Text of about `chars` characters (or `words` words), as sentences. */
  text(rng: Rng, opts: { chars?: number; words?: number }): string {
    const out: string[] = [];
    let length = 0;
    let count = 0;
    let sentence: string[] = [];
    const limitReached = () => (opts.chars !== undefined ? length >= opts.chars : count >= (opts.words ?? 0));
    while (!limitReached()) {
      const w = this.word(rng);
      sentence.push(sentence.length === 0 ? w[0]!.toUpperCase() + w.slice(1) : w);
      length += w.length + 1;
      count++;
      if (sentence.length >= rng.int(6, 18)) {
        out.push(`${sentence.join(' ')}.`);
        sentence = [];
      }
    }
    if (sentence.length) out.push(`${sentence.join(' ')}.`);
    const text = out.join(' ');
    return opts.chars !== undefined ? text.slice(0, Math.max(1, opts.chars)).trimEnd() : text;
  }
}

/** Scales an empirical distribution so its median is `target`, and samples one value. */
function sampleScaled(rng: Rng, values: number[], valuesMedian: number, target: number): number {
  return Math.max(1, Math.round((rng.pick(values) * target) / (valuesMedian || 1)));
}

const LAYOUTS: Record<number, string[]> = {
  1: ['{name}'],
  2: ['skills/{name}', 'skills/{name}', '.claude/{name}'],
  3: ['{cat}/skills/{name}', '.claude/skills/{name}', '.agents/skills/{name}', 'skills/{cat}/{name}'],
  4: ['plugins/{cat}/skills/{name}'],
  5: ['{cat}/plugins/{plugin}/skills/{name}'],
};

const LICENSES = ['MIT', 'Apache-2.0', 'MIT', 'MIT', 'BSD-3-Clause', 'MPL-2.0', null];

/** Writes every repository of the corpus and returns the manifest (also written to `<outDir>/manifest.json`). */
export async function generateCorpus(fit: CorpusFit, opts: GenerateOptions): Promise<GeneratedCorpus> {
  const rng = new Rng(opts.seed);
  const sampler = new WordSampler(fit.vocabulary.slice(0, 20_000));
  const counts = skillsPerRepo(opts.skills, opts.repos, opts.largest);
  const reposRoot = path.join(opts.outDir, 'repos');
  rmSync(opts.outDir, { recursive: true, force: true });
  mkdirSync(reposRoot, { recursive: true });
  const depthChoices = Object.entries(fit.depthShares)
    .map(([d, share]) => [Math.min(5, Math.max(1, Number(d))), share] as const)
    .filter(([, s]) => s > 0);
  const pickDepth = () => {
    let x = rng.next();
    for (const [d, s] of depthChoices) {
      x -= s;
      if (x <= 0) return d;
    }
    return 2;
  };
  const extraKeys = Object.entries(fit.extraKeys);
  const descriptionMedian = median(fit.descriptionLengths);
  const bodyMedian = median(fit.bodyWords);
  // git does the compression; keep two fast-imports running so both cores are busy.
  const pending = new Set<Promise<void>>();
  const repos: GeneratedRepo[] = [];
  for (let i = 0; i < counts.length; i++) {
    const owner = `${sampler.word(rng)}-${rng.pick(fit.nameTokens)}${i % 7}`;
    const repo = `${rng.pick(fit.nameTokens)}-skills-${i}`;
    const stars = Math.round(Math.exp(rng.normal() * 1.8 + 3 + Math.log(counts[i]!) / 2));
    const files = new Map<string, string>();
    files.set('README.md', `# ${repo}\n\n${sampler.text(rng, { words: 120 })}\n`);
    files.set('LICENSE', 'Synthetic licence text for a benchmark corpus.\n'.repeat(20));
    files.set('src/index.ts', `export const name = '${repo}';\n`.repeat(30));
    const depth = pickDepth();
    const layout = rng.pick(LAYOUTS[depth] ?? LAYOUTS[2]!);
    const names = new Set<string>();
    const skillFolders: string[] = [];
    let skillFolderBytes = 0;
    for (let s = 0; s < counts[i]!; s++) {
      let name = `${rng.pick(fit.nameTokens)}-${rng.pick(fit.nameTokens)}`;
      if (rng.chance(0.4)) name += `-${rng.pick(fit.nameTokens)}`;
      while (names.has(name)) name += `-${s}`;
      names.add(name);
      const folder = layout
        .replace('{name}', name)
        .replace('{cat}', `cat${s % Math.max(1, Math.ceil(counts[i]! / 40))}`)
        .replace('{plugin}', `plugin${s % 5}`);
      skillFolders.push(folder);
      const description = sampler.text(rng, {
        chars: sampleScaled(rng, fit.descriptionLengths, descriptionMedian, opts.descriptionMedian),
      });
      const body = sampler.text(rng, {
        words: sampleScaled(rng, fit.bodyWords, bodyMedian, opts.bodyMedianWords),
      });
      let frontmatter = `name: ${rng.chance(0.03) ? name.replace(/-/g, ' ') : name}\ndescription: ${JSON.stringify(description)}\n`;
      for (const [key, share] of extraKeys) {
        if (rng.chance(share)) frontmatter += `${key}: ${JSON.stringify(sampler.word(rng))}\n`;
      }
      let content = `---\n${frontmatter}---\n# ${name}\n\n${body}\n`;
      if (rng.chance(fit.noFrontmatterShare)) content = `# ${name}\n\n${body}\n`;
      else if (rng.chance(fit.invalidYamlShare))
        content = `---\nname: ${name}\ndescription: Use when: ${description}\n---\n${body}\n`;
      if (rng.chance(fit.crlfShare)) content = content.replace(/\n/g, '\r\n');
      files.set(`${folder}/SKILL.md`, content);
      skillFolderBytes += Buffer.byteLength(content);
      if (rng.chance(0.3)) {
        const ref = `# Reference\n\n${sampler.text(rng, { words: rng.int(100, 600) })}\n`;
        files.set(`${folder}/reference.md`, ref);
        skillFolderBytes += Buffer.byteLength(ref);
      }
      if (rng.chance(0.15)) {
        const script = `#!/bin/sh\necho ${name}\n`;
        files.set(`${folder}/scripts/run.sh`, script);
        skillFolderBytes += Buffer.byteLength(script);
      }
      if (rng.chance(fit.nestedShare)) {
        const inner = `---\nname: ${name}-inner\ndescription: Nested part of ${name}.\n---\nInner.\n`;
        files.set(`${folder}/inner/SKILL.md`, inner);
        skillFolderBytes += Buffer.byteLength(inner);
      }
    }
    const pushedAt = new Date(Date.UTC(2026, 0, 1) + rng.int(0, 300) * 86_400_000).toISOString();
    const totalBytes = [...files.values()].reduce((s, c) => s + Buffer.byteLength(c), 0);
    const generated: GeneratedRepo = {
      owner,
      repo,
      defaultBranch: 'main',
      stars,
      license: rng.pick(LICENSES),
      pushedAt,
      topics: ['agent-skills', rng.pick(fit.nameTokens)],
      skills: skillFolders.sort(),
      skillFolderBytes,
      totalBytes,
    };
    if (opts.onRepo) await opts.onRepo(generated, files);
    else {
      const write = writeBareRepo(path.join(reposRoot, owner, `${repo}.git`), files, pushedAt).finally(() =>
        pending.delete(write),
      );
      pending.add(write);
      if (pending.size >= 2) await Promise.race(pending);
    }
    repos.push(generated);
    if ((i + 1) % 100 === 0) console.error(`generated ${i + 1}/${counts.length} repositories`);
  }
  await Promise.all(pending);
  const corpus: GeneratedCorpus = { seed: opts.seed, skills: opts.skills, repos, reposRoot };
  writeFileSync(path.join(opts.outDir, 'manifest.json'), JSON.stringify(corpus));
  writeFileSync(
    path.join(opts.outDir, 'repos.txt'),
    `${repos.map((r) => `gh:${r.owner}/${r.repo}`).join('\n')}\n`,
  );
  return corpus;
}

/** Creates a bare repository holding `files` in one commit, through `git fast-import`. */
export function writeBareRepo(bareDir: string, files: Map<string, string>, date: string): Promise<void> {
  mkdirSync(bareDir, { recursive: true });
  return new Promise((resolve, reject) => {
    const init = spawn('git', ['init', '-q', '--bare', '-b', 'main', bareDir]);
    init.on('error', reject);
    init.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git init failed for ${bareDir}`));
      const fi = spawn('git', ['fast-import', '--quiet'], {
        cwd: bareDir,
        env: { ...process.env, GIT_DIR: bareDir },
      });
      let stderr = '';
      fi.stderr.on('data', (d) => {
        stderr += d;
      });
      fi.on('error', reject);
      fi.on('close', (c) => {
        if (c !== 0) return reject(new Error(`git fast-import failed: ${stderr}`));
        const cfg = spawn('git', ['config', 'uploadpack.allowFilter', 'true'], {
          env: { ...process.env, GIT_DIR: bareDir },
        });
        cfg.on('close', () => resolve());
      });
      const seconds = Math.floor(Date.parse(date) / 1000);
      const message = 'synthetic corpus snapshot';
      fi.stdin.write(
        `commit refs/heads/main\ncommitter bench <bench@example.invalid> ${seconds} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n`,
      );
      for (const [p, content] of files) {
        const mode = p.endsWith('.sh') ? '100755' : '100644';
        fi.stdin.write(`M ${mode} inline ${p}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
      }
      fi.stdin.end('\n');
    });
  });
}
