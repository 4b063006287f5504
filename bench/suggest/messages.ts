/**
 * The suggestion message set (bench/suggest/messages.json): agent messages written by reading the shared
 * corpus's skills, each with the skills that truly help. Loaded and checked here so the benchmark
 * (`npm run bench -- suggest`), the relevance suite and the check script (`npx tsx bench/suggest/check.ts`)
 * read it the same way.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findSkillFolders, SUGGEST_MAX_MESSAGE, type TreeEntry } from '@atskills/protocol';
import { listCorpusRepos, readCorpusMeta, readCorpusTree } from '../../test/support/corpus.js';

/** The four kinds of message (issue 25): the skill's own words, other words, two needs, no skill need. */
export const MESSAGE_KINDS = ['direct', 'indirect', 'multi', 'none'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** The fewest messages of each kind the set must hold. */
export const MINIMUM_PER_KIND: Record<MessageKind, number> = {
  direct: 55,
  indirect: 45,
  multi: 30,
  none: 25,
};

/** The suggestions the speed benchmarks ask for a message (`limit`): the five recall@5 judges (hooks ask for 3). */
export const SUGGEST_LIMIT = 5;

/** One judged message, entries expanded to identities. */
export interface MessageJudgement {
  id: string;
  kind: MessageKind;
  message: string;
  /** Identities of every skill that truly helps; empty for kind `none`. */
  relevant: string[];
  /** For kind `multi`: the relevant identities of each need, in the order the message states them. */
  needs?: string[][];
  /** A message in another language than English: its language (`translates`'s prefix, or `language`). */
  language?: string;
}

/** The file as written: entries may be `ALIAS/rest`. */
export interface MessageFile {
  about: string;
  aliases: Record<string, string>;
  messages: {
    id: string;
    kind: MessageKind;
    message: string;
    relevant: string[];
    needs?: string[][];
    /** The entries of `relevant` added by judging the pool (`suggest --pool`): provenance, not read by the benchmark. */
    pooled?: string[];
    /** A message in another language: its language and the id of the message it translates (`es:direct-090`), or its language alone. */
    translates?: string;
    language?: string;
  }[];
}

/** Where the set lives, and the development set used while it was being written (same format). */
export const MESSAGES_PATH = path.join(import.meta.dirname, 'messages.json');
export const DEV_MESSAGES_PATH = path.join(import.meta.dirname, 'messages.dev.json');

/** The set the suggestion benchmarks answer by default: the judged set, or the development set without it. */
export function defaultMessagesPath(): string {
  return existsSync(MESSAGES_PATH) ? MESSAGES_PATH : DEV_MESSAGES_PATH;
}

/**
 * The name a message file gives the results it is judged into: '' for the judged set, else what its file name
 * adds to `messages` (messages.short.json: `short`), so that judging another set never overwrites the main
 * set's figures.
 */
export function messageSetName(messagesFile: string): string {
  if (path.resolve(messagesFile) === path.resolve(defaultMessagesPath())) return '';
  return path
    .basename(messagesFile)
    .replace(/^messages\.?/, '')
    .replace(/\.json$/, '');
}

/** Reads the file as written. */
export function readMessageFile(file = MESSAGES_PATH): MessageFile {
  return JSON.parse(readFileSync(file, 'utf8')) as MessageFile;
}

/** Expands `ALIAS/rest` to `aliases[ALIAS]/rest`; other entries are identities already. */
export function expandEntry(aliases: Record<string, string>, entry: string): string {
  const slash = entry.indexOf('/');
  const alias = slash > 0 ? aliases[entry.slice(0, slash)] : undefined;
  return alias ? `${alias}${entry.slice(slash)}` : entry;
}

/** Every message with its entries expanded to identities (duplicates dropped). */
export function loadMessages(file = MESSAGES_PATH): MessageJudgement[] {
  const data = readMessageFile(file);
  const expand = (list: string[]) => [...new Set(list.map((e) => expandEntry(data.aliases, e)))];
  return data.messages.map((m) => ({
    id: m.id,
    kind: m.kind,
    message: m.message,
    relevant: expand(m.relevant),
    ...(m.needs ? { needs: m.needs.map(expand) } : {}),
    ...languageOf(m),
  }));
}

/** The language a message of another language names: `language`, else the prefix of `translates` ("es:direct-090"). */
function languageOf(m: MessageFile['messages'][number]): { language?: string } {
  const language = m.language ?? m.translates?.split(':')[0];
  return language ? { language } : {};
}

/** A corpus skill as the seed indexes it: its identity, and whether its SKILL.md bytes are withheld. */
export interface CorpusSkill {
  identity: string;
  withheld: boolean;
}

/** The withheld paths of a meta.json note: a list, or an object whose `paths` is one. */
function withheldPaths(note: unknown): string[] {
  if (Array.isArray(note)) return note.filter((p): p is string => typeof p === 'string');
  const paths = (note as { paths?: unknown } | undefined)?.paths;
  return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
}

/** Every skill of the shared corpus by the leaf rule over each repository's tree.tsv (what the seed indexes). */
export async function corpusSkills(): Promise<Map<string, CorpusSkill>> {
  const out = new Map<string, CorpusSkill>();
  for (const name of await listCorpusRepos()) {
    const tree = await readCorpusTree(name);
    const meta = await readCorpusMeta(name);
    const withheld = new Set(withheldPaths(meta.notes?.withheld_restrictive_license));
    const entries: TreeEntry[] = tree.map((t) => ({
      path: t.path,
      type: t.mode === '120000' ? 'symlink' : 'file',
      size: t.size ?? 0,
    }));
    for (const folder of findSkillFolders(entries)) {
      const identity = `gh:${name}${folder ? `/${folder}` : ''}`;
      const skillFile = folder ? `${folder}/SKILL.md` : 'SKILL.md';
      out.set(identity, { identity, withheld: withheld.has(skillFile) || withheld.has(folder) });
    }
  }
  return out;
}

/** What the check found: problems (the set is invalid) and figures describing it. */
export interface CheckReport {
  errors: string[];
  /** Kinds with fewer messages than MINIMUM_PER_KIND: the set is valid but not yet complete. */
  shortfalls: string[];
  warnings: string[];
  counts: Record<MessageKind, number>;
  total: number;
  over300Chars: number;
  withCodeBlock: number;
  repositories: Record<string, number>;
  identitiesJudged: number;
}

/**
 * Validates the set against the corpus: ids unique, kinds counted, every relevant identity a corpus skill, every
 * need's and pooled entry among the relevant ones.
 */
export async function checkMessages(file = MESSAGES_PATH): Promise<CheckReport> {
  const data = readMessageFile(file);
  const skills = await corpusSkills();
  const errors: string[] = [];
  const shortfalls: string[] = [];
  const warnings: string[] = [];
  const counts = Object.fromEntries(MESSAGE_KINDS.map((k) => [k, 0])) as Record<MessageKind, number>;
  const repositories: Record<string, number> = {};
  const judged = new Set<string>();
  const ids = new Set<string>();
  const texts = new Set<string>();
  const withheldJudged = new Set<string>();
  let over300 = 0;
  let withCode = 0;

  if (typeof data.about !== 'string' || data.about.length === 0) errors.push('`about` is missing');
  for (const [alias, prefix] of Object.entries(data.aliases ?? {})) {
    if (!prefix.startsWith('gh:')) errors.push(`alias ${alias}: ${prefix} is not a gh: identity prefix`);
  }
  for (const m of data.messages ?? []) {
    const where = `message ${m.id ?? '(no id)'}`;
    if (ids.has(m.id)) errors.push(`${where}: duplicate id`);
    ids.add(m.id);
    if (!MESSAGE_KINDS.includes(m.kind)) {
      errors.push(`${where}: unknown kind ${m.kind}`);
      continue;
    }
    counts[m.kind]++;
    if (!new RegExp(`^${m.kind}-\\d{3}$`).test(m.id)) errors.push(`${where}: id should read ${m.kind}-NNN`);
    if (typeof m.message !== 'string' || m.message.trim().length === 0)
      errors.push(`${where}: empty message`);
    else {
      if (m.message.length > SUGGEST_MAX_MESSAGE)
        errors.push(`${where}: over ${SUGGEST_MAX_MESSAGE} characters`);
      if (texts.has(m.message)) errors.push(`${where}: same text as an earlier message`);
      texts.add(m.message);
      if (m.message.length > 300) over300++;
      if (m.message.includes('```')) withCode++;
    }
    const relevant = (m.relevant ?? []).map((e) => expandEntry(data.aliases, e));
    if (new Set(relevant).size !== relevant.length) errors.push(`${where}: an identity is listed twice`);
    if (m.kind === 'none' && relevant.length > 0) errors.push(`${where}: kind none lists relevant skills`);
    if (m.kind !== 'none' && relevant.length === 0) errors.push(`${where}: no relevant skill`);
    for (const id of relevant) {
      const skill = skills.get(id);
      if (!skill) errors.push(`${where}: ${id} is not a corpus skill folder`);
      else {
        judged.add(id);
        const repo = id.slice(3).split('/').slice(0, 2).join('/');
        repositories[repo] = (repositories[repo] ?? 0) + 1;
        if (skill.withheld) withheldJudged.add(m.id);
      }
    }
    if (m.kind === 'multi') {
      const needs = (m.needs ?? []).map((n) => n.map((e) => expandEntry(data.aliases, e)));
      if (needs.length < 2) errors.push(`${where}: kind multi needs at least two needs`);
      if (needs.some((n) => n.length === 0)) errors.push(`${where}: a need lists no skill`);
      const inNeeds = new Set(needs.flat());
      for (const id of inNeeds)
        if (!relevant.includes(id)) errors.push(`${where}: need skill ${id} not in relevant`);
      for (const id of relevant)
        if (!inNeeds.has(id)) errors.push(`${where}: relevant ${id} belongs to no need`);
      for (let i = 0; i < needs.length; i++)
        for (let j = i + 1; j < needs.length; j++)
          if (needs[i]!.some((id) => needs[j]!.includes(id)))
            warnings.push(`${where}: needs ${i + 1} and ${j + 1} share a skill`);
    } else if (m.needs) errors.push(`${where}: only kind multi has needs`);
    for (const id of (m.pooled ?? []).map((e) => expandEntry(data.aliases, e)))
      if (!relevant.includes(id)) errors.push(`${where}: pooled ${id} not in relevant`);
  }
  if (withheldJudged.size > 0)
    warnings.push(
      `${withheldJudged.size} message(s) judge a skill whose bytes are withheld (indexed by name only): ${[...withheldJudged].join(', ')}`,
    );
  for (const kind of MESSAGE_KINDS) {
    if (counts[kind] < MINIMUM_PER_KIND[kind])
      shortfalls.push(`kind ${kind}: ${counts[kind]} messages, at least ${MINIMUM_PER_KIND[kind]} wanted`);
  }
  const total = data.messages?.length ?? 0;
  return {
    errors,
    shortfalls,
    warnings,
    counts,
    total,
    over300Chars: over300,
    withCodeBlock: withCode,
    repositories,
    identitiesJudged: judged.size,
  };
}
