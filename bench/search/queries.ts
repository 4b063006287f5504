/**
 * 300 realistic search queries drawn from the indexed corpus's own vocabulary (deterministic for a seed):
 * exact skill names, name prefixes, names with a one-letter typo, multi-word phrases from descriptions,
 * rare terms (in a handful of skills) and very common terms (in thousands).
 */
import pg from 'pg';
import { Rng } from '../lib/rng.js';

export type QueryKind = 'exact' | 'prefix' | 'typo' | 'multi-word' | 'rare' | 'common' | 'relevance';

export interface BenchQuery {
  kind: QueryKind;
  q: string;
}

const MIX: [QueryKind, number][] = [
  ['exact', 60],
  ['prefix', 60],
  ['typo', 60],
  ['multi-word', 60],
  ['rare', 30],
  ['common', 30],
];

function typo(rng: Rng, word: string): string {
  const i = rng.int(1, Math.max(1, word.length - 2));
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  switch (rng.int(0, 2)) {
    case 0:
      return word.slice(0, i) + word.slice(i + 1); // deletion
    case 1:
      return word.slice(0, i) + rng.pick([...letters]) + word.slice(i + 1); // substitution
    default:
      return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2); // transposition
  }
}

/** Builds the query list from the skills in the database. */
export async function buildQueries(databaseUrl: string, seed = 1, total = 300): Promise<BenchQuery[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let rows: { name: string; description: string }[];
  try {
    rows = (
      await client.query(
        'select name, description from skills where gone_at is null and parse_error is null order by identity',
      )
    ).rows;
  } finally {
    await client.end();
  }
  if (rows.length === 0) throw new Error('no indexed skills to draw queries from');
  const rng = new Rng(seed);
  // Document frequency of description words (3+ letters) decides rare and common terms.
  const df = new Map<string, number>();
  for (const r of rows) {
    for (const w of new Set(r.description.toLowerCase().match(/\p{L}{3,}/gu) ?? []))
      df.set(w, (df.get(w) ?? 0) + 1);
  }
  const byFrequency = [...df.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const common = byFrequency.slice(0, 60).map(([w]) => w);
  const rare = byFrequency.filter(([, n]) => n >= 2 && n <= 5).map(([w]) => w);
  const out: BenchQuery[] = [];
  const scale = total / 300;
  for (const [kind, n] of MIX) {
    for (let i = 0; i < Math.round(n * scale); i++) {
      const row = rng.pick(rows);
      const name = row.name.toLowerCase();
      let q: string;
      switch (kind) {
        case 'exact':
          q = name;
          break;
        case 'prefix':
          q = name.slice(0, rng.int(3, Math.max(3, Math.min(8, name.length - 1))));
          break;
        case 'typo':
          q = typo(rng, name);
          break;
        case 'multi-word': {
          const words = row.description.toLowerCase().match(/\p{L}{3,}/gu) ?? [name];
          const start = rng.int(0, Math.max(0, words.length - 3));
          q = words.slice(start, start + rng.int(2, 3)).join(' ');
          break;
        }
        case 'rare':
          q = rare.length ? rng.pick(rare) : name;
          break;
        case 'common':
          q = rng.pick(common);
          break;
        default:
          q = name;
      }
      out.push({ kind, q });
    }
  }
  // Interleave kinds so every stretch of the run sees the whole mix.
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The API path of a query. */
export function searchPath(q: string): string {
  return `/v1/search?q=${encodeURIComponent(q)}&limit=20`;
}
