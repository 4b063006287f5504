/**
 * `npm run bench -- suggest-ask [--file <path>] [--detail] [--limit 5] [message ...]`: answers messages over
 * the suggestion benchmark's database (the shared corpus's skills; `atskills_suggest`, or
 * BENCH_SUGGEST_DATABASE: seeded first when empty) and prints, per message, how many of its words are
 * telling (the task prior's count), its suggestions with their scores or its abstention with its best score,
 * and with `--detail` its first candidates' evidence (the reranker's features) and `/search`'s first results
 * for the same words. What a maintainer reads to see why a message is answered as it is, before judging it
 * into a message file; `--file` takes one message a line. Writes no results file.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import type { Evidence } from '../../apps/api/src/suggest/abstain.js';
import { builtEngines, suggestionCorpus } from './small-hubs.js';

/** The evidence --detail prints per candidate (the reranker's features and the lists' ranks). */
const SHOWN_EVIDENCE: (keyof Evidence)[] = [
  'fused',
  'coverage',
  'allIdf',
  'nameCovered',
  'descriptionCovered',
  'descriptionLead',
  'partLexicalRank',
  'dense',
  'lexicalRank',
  'semanticRank',
  'lsaRank',
];

/** A skill as the lines print it: its owner and its folder's name ("gh:getsentry/skills/x/code-review": getsentry/code-review). */
const short = (identity: string) => {
  const parts = identity.split('/');
  return `${parts[0]!.replace(/^[a-z]+:/, '')}/${parts[parts.length - 1]}`;
};

export async function run(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      file: { type: 'string' },
      detail: { type: 'boolean', default: false },
      limit: { type: 'string', default: '5' },
    },
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10) throw new Error('--limit takes 1 to 10');
  const messages = [
    ...positionals,
    ...(values.file
      ? readFileSync(values.file, 'utf8')
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean)
      : []),
  ];
  if (messages.length === 0) throw new Error('give messages as arguments or --file <one a line>');

  const { sourceUrl } = await suggestionCorpus();
  const handle = connectPostgres({ url: sourceUrl, max: 4 });
  const engines = await builtEngines(handle.db, { explain: true });
  const { memory, suggest } = engines;
  try {
    for (const message of messages) {
      const answer = await suggest.suggest(message, ANONYMOUS_VIEWER, limit);
      const telling = answer.task?.informative ?? 0;
      const said = answer.abstained
        ? `abstains (${answer.abstention}, best ${(answer.best ?? 0).toFixed(3)})`
        : answer.results.map((r) => `${short(r.hit.identity)} ${r.score.toFixed(2)}`).join(' | ');
      console.log(`${message}\n  telling words ${telling}: ${said}`);
      if (!values.detail) continue;
      for (const c of (answer.explained ?? []).slice(0, 4)) {
        const features = SHOWN_EVIDENCE.map((f) => `${f} ${Number(c.evidence[f]).toFixed(2)}`).join(', ');
        console.log(`    ${short(c.identity)} ${c.score.toFixed(3)}: ${features}`);
      }
      const page = await memory.search(message, {}, ANONYMOUS_VIEWER, limit, undefined);
      console.log(`    /search: ${page.hits.map((h) => short(h.identity)).join(' | ')}`);
    }
  } finally {
    await engines.close();
    await handle.close();
  }
  process.exit(0);
}
