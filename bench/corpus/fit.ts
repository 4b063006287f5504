/**
 * Measures the distributions of the shared corpus that the synthetic corpus reproduces: description
 * lengths, body lengths, word frequencies, folder-name tokens, frontmatter keys and the share of
 * broken files. Only statistics leave this module; no corpus text is copied into the generated repos
 * except single common words drawn by frequency.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export interface CorpusFit {
  skills: number;
  descriptionLengths: number[];
  bodyWords: number[];
  /** Words by frequency, most frequent first, with their counts. */
  vocabulary: [string, number][];
  nameTokens: string[];
  /** Share of skills with each extra frontmatter key. */
  extraKeys: Record<string, number>;
  /** Depth of the skill folder below the repository root (1 = top-level folder). */
  depthShares: Record<number, number>;
  noFrontmatterShare: number;
  invalidYamlShare: number;
  crlfShare: number;
  longDescriptionShare: number;
  nestedShare: number;
}

const FRONTMATTER = /^\ufeff?---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)([\s\S]*)$/;

/** Reads every SKILL.md of the corpus folder (laid out like ../shared/corpus/repos) and fits the distributions. */
export function fitCorpus(reposDir: string): CorpusFit {
  const descriptionLengths: number[] = [];
  const bodyWords: number[] = [];
  const words = new Map<string, number>();
  const nameTokens = new Set<string>();
  const keyCounts = new Map<string, number>();
  const depths = new Map<number, number>();
  let skills = 0;
  let noFm = 0;
  let badYaml = 0;
  let crlf = 0;
  let longDesc = 0;
  let nested = 0;
  const count = (text: string) => {
    for (const w of text.toLowerCase().match(/[a-z][a-z0-9]{2,14}/g) ?? [])
      words.set(w, (words.get(w) ?? 0) + 1);
  };
  for (const owner of readdirSync(reposDir)) {
    for (const repo of readdirSync(path.join(reposDir, owner))) {
      const base = path.join(reposDir, owner, repo);
      const tree = readFileSync(path.join(base, 'tree.tsv'), 'utf8').split('\n');
      const skillFiles = tree
        .map((l) => l.split('\t')[3] ?? '')
        .filter((p) => p === 'SKILL.md' || p.endsWith('/SKILL.md'));
      const folders = skillFiles.map((p) => path.posix.dirname(p));
      for (const file of skillFiles) {
        const folder = path.posix.dirname(file);
        if (folders.some((f) => f !== folder && (f === '.' || folder.startsWith(`${f}/`)))) {
          nested++;
          continue;
        }
        skills++;
        const depth = folder === '.' ? 0 : folder.split('/').length;
        depths.set(depth, (depths.get(depth) ?? 0) + 1);
        for (const t of path.posix.basename(folder).toLowerCase().split(/[-_]/)) {
          if (/^[a-z][a-z0-9]{1,14}$/.test(t)) nameTokens.add(t);
        }
        const full = path.join(base, 'files', file);
        if (!existsSync(full)) continue;
        const text = readFileSync(full, 'utf8');
        if (text.includes('\r\n')) crlf++;
        const m = FRONTMATTER.exec(text);
        if (!m) {
          noFm++;
          continue;
        }
        const body = m[2] ?? '';
        bodyWords.push(body.split(/\s+/).filter(Boolean).length);
        count(body);
        let data: unknown;
        try {
          data = parse(m[1] ?? '', { maxAliasCount: 50 });
        } catch {
          badYaml++;
          continue;
        }
        if (!data || typeof data !== 'object') continue;
        const record = data as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          if (key !== 'name' && key !== 'description') keyCounts.set(key, (keyCounts.get(key) ?? 0) + 1);
        }
        if (typeof record.description === 'string') {
          descriptionLengths.push(record.description.length);
          if (record.description.length > 1024) longDesc++;
          count(record.description);
        }
      }
    }
  }
  const extraKeys: Record<string, number> = {};
  for (const [k, v] of keyCounts) if (v >= 3) extraKeys[k] = v / skills;
  const depthShares: Record<number, number> = {};
  for (const [d, v] of depths) depthShares[d] = v / skills;
  return {
    skills,
    descriptionLengths,
    bodyWords,
    vocabulary: [...words.entries()].filter(([, c]) => c >= 2).sort((a, b) => b[1] - a[1]),
    nameTokens: [...nameTokens].sort(),
    extraKeys,
    depthShares,
    noFrontmatterShare: noFm / skills,
    invalidYamlShare: badYaml / skills,
    crlfShare: crlf / skills,
    longDescriptionShare: longDesc / skills,
    nestedShare: nested / skills,
  };
}
