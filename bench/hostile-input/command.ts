/**
 * `npm run bench -- hostile-input`: the inputs that once held the hub or the crawler for seconds to minutes
 * (docs/security.md, "Patterns that run in linear time"), each timed through the function that reads it
 * against a plain input of the same length through the same function, in this process: linear code keeps
 * the ratio small, a pattern that backtracks over a run makes it thousands. First, a publish of 50 MiB
 * (plain, and hostile to the safety scan) validated as the API does and with the scan on the event loop: the
 * longest wait of the loop. Writes bench/results/hostile-input.json.
 */
import { parseGithubRepository, scanText } from '@atskills/protocol';
import { indexTokens, scanSkillContent } from '@atskills/protocol/content';
import type { ExtractedArchive } from '../../apps/api/src/services/publish/extract-archive.js';
import { DEFAULT_PUBLISH_LIMITS } from '../../apps/api/src/services/publish/limits.js';
import { type ScanInput, scanContents } from '../../apps/api/src/services/publish/scan-thread.js';
import { validateCollection } from '../../apps/api/src/services/publish/validate-collection.js';
import { extractNeeds, taskSignal } from '../../apps/api/src/suggest/needs.js';
import { renderMarkdown } from '../../apps/api/src/web/markdown.js';
import { watchLoop } from '../lib/loop-waits.js';
import { printTable, writeResult } from '../lib/report.js';
import { Rng } from '../lib/rng.js';
import { median, round } from '../lib/stats.js';

/** A plain message of `length` characters: words and spaces, as a user types them. */
const prose = (length: number) =>
  'please review the deploy script and fix the failing lint step in our pipeline '
    .repeat(length)
    .slice(0, length);

/** `length` characters of random-looking base64 (deterministic from `seed`): what the blob check flags. */
function blob(length: number, seed: number): string {
  const rng = new Rng(seed);
  const alphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'];
  return Array.from({ length }, () => rng.pick(alphabet)).join('');
}

/** One hostile input, the function that reads it, and a plain input of the same length for it. */
interface HostileCase {
  name: string;
  hostile: string;
  plain: string;
  read: (text: string) => unknown;
}

const SCAN_LINE = 256 * 1024;

const cases: HostileCase[] = [
  {
    name: '/v1/suggest need finding: 4,001 letters, 3,998 spaces, a letter',
    hostile: `${'x'.repeat(4_001)}${' '.repeat(3_998)}y`,
    plain: prose(8_000),
    read: extractNeeds,
  },
  {
    name: '/v1/suggest need finding: "a-" x 4,000',
    hostile: 'a-'.repeat(4_000),
    plain: prose(8_000),
    read: extractNeeds,
  },
  {
    name: '/v1/suggest need finding: "A+" x 3,999 + "_"',
    hostile: `${'A+'.repeat(3_999)}_`,
    plain: prose(8_000),
    read: extractNeeds,
  },
  {
    name: '/v1/suggest need finding: "at N" + "A0" x 3,998',
    hostile: `at N${'A0'.repeat(3_998)}`,
    plain: prose(8_000),
    read: extractNeeds,
  },
  {
    name: '/v1/suggest task signal: a tab run of 7,998',
    hostile: `x${'\t'.repeat(7_998)}x`,
    plain: prose(8_000),
    read: (t) => taskSignal(t, t),
  },
  {
    name: 'repository name: "/" x 262,144 + "x/"',
    hostile: `${'/'.repeat(262_144)}x/`,
    plain: `${'a'.repeat(262_144)}/x`,
    read: (t) => {
      try {
        return parseGithubRepository(t);
      } catch {
        return null;
      }
    },
  },
  // A skill's page renders its body for anyone who opens it.
  ...[
    ['"_a" x 50,000', '_a'.repeat(50_000)],
    ['"*a" x 50,000', '*a'.repeat(50_000)],
    ['"**a" x 33,333', '**a'.repeat(33_333)],
    ['">" x 100,000', '>'.repeat(100_000)],
  ].map(([what, hostile]) => ({
    name: `skill page Markdown: ${what}`,
    hostile: hostile!,
    plain: prose(hostile!.length),
    read: (t: string) => renderMarkdown(t),
  })),
  {
    name: 'token count (publish, crawl): one word of 262,144 "a"s',
    hostile: 'a'.repeat(SCAN_LINE),
    plain: prose(SCAN_LINE),
    read: indexTokens,
  },
  {
    name: 'safety scan, one 256 KiB line: "IRM-" x 65,536',
    hostile: 'IRM-'.repeat(SCAN_LINE / 4),
    plain: prose(SCAN_LINE),
    read: (t) => scanText('SKILL.md', t),
  },
  // A window of 300 characters after each command word: a line of them alone is read at plain speed (the
  // patterns' `needs`); one that also holds what a match needs after the window still reads every window.
  ...['curl ', 'wget ', 'nc ', 'pwsh ', 'base64 -d ', '.downloadstring('].map((word) => ({
    name: `safety scan, one 256 KiB line: "${word}" x ${Math.floor(SCAN_LINE / word.length).toLocaleString('en')}`,
    hostile: word.repeat(Math.floor(SCAN_LINE / word.length)),
    plain: prose(SCAN_LINE),
    read: (t: string) => scanText('SKILL.md', t),
  })),
  {
    name: 'safety scan, one 256 KiB line: "curl " x 52,425 + " ~/.ssh/id_rsa"',
    hostile: `${'curl '.repeat(52_425)} ~/.ssh/id_rsa`,
    plain: prose(SCAN_LINE),
    read: (t) => scanText('SKILL.md', t),
  },
  {
    name: 'safety scan, one 256 KiB line: ("data:image/png;base64," + a 200-character blob) x 1,200',
    hostile: Array.from({ length: 1_200 }, (_, i) => `data:image/png;base64,${blob(200, i)}`).join(' '),
    plain: prose(267_599),
    read: (t) => scanText('SKILL.md', t),
  },
  {
    name: 'safety scan: "curl|env v" + "==<tab>env<tab>a" x 50',
    hostile: `curl|env\tv${'==\tenv\ta'.repeat(50)}\n`,
    plain: prose(411),
    read: (t) => scanText('SKILL.md', t),
  },
  {
    name: 'safety scan, one 256 KiB line: "{" + "SCP<tab>-" x 52,428',
    hostile: `{${'SCP\t-'.repeat(SCAN_LINE / 5)}`,
    plain: prose(SCAN_LINE),
    read: (t) => scanText('SKILL.md', t),
  },
];

/** Milliseconds of one call, the median of `rounds` after one unmeasured call. */
function time(read: (text: string) => unknown, text: string, rounds: number): number {
  read(text);
  const runs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    read(text);
    runs.push(performance.now() - started);
  }
  return median(runs);
}

/** A collection of `skills` skills, each with a reference file of `bytes` bytes of `text` repeated. */
function collection(skills: number, bytes: number, text: string): ExtractedArchive {
  const files = new Map<string, Buffer>();
  const dirs = new Set<string>();
  const reference = Buffer.from(text.repeat(Math.ceil(bytes / text.length)).slice(0, bytes));
  for (let i = 0; i < skills; i++) {
    dirs.add(`s${i}`);
    const skill = `---\nname: s${i}\ndescription: Writes release notes for skill ${i}.\n---\n\n# Notes\n`;
    files.set(`s${i}/SKILL.md`, Buffer.from(skill));
    files.set(`s${i}/reference.md`, reference);
  }
  return { files, dirs, unpackedBytes: skills * bytes };
}

/**
 * A publish's validation as the API runs it (the scan in a worker thread) and with the scan on the event
 * loop: the wall time and the longest the loop waited (a timer every 5 ms), the most a hostile publisher
 * holds every other request of the hub.
 */
async function publishRows() {
  const hostileLine = `${'curl '.repeat(52_425)} ~/.ssh/id_rsa\n`;
  const cases = [
    { input: 'publish: 5 skills x 9.9 MiB of plain prose', text: `${prose(4_000)}\n` },
    { input: 'publish: 5 skills x 9.9 MiB of 256 KiB "curl ... ~/.ssh/id_rsa" lines', text: hostileLine },
  ];
  const target = { namespace: 'acme', collection: 'tools' };
  const inline = async (contents: readonly ScanInput[]) => contents.map((c) => scanSkillContent(c));
  const rows: Record<string, string | number>[] = [];
  for (const c of cases) {
    const archive = collection(5, Math.round(9.9 * 2 ** 20), c.text);
    const measured: Record<string, number> = {};
    for (const [side, scan] of [
      ['thread', scanContents],
      ['inline', inline],
    ] as const) {
      const { seconds, waits } = await watchLoop(() =>
        validateCollection(archive, target, DEFAULT_PUBLISH_LIMITS, scan),
      );
      measured[`${side}Ms`] = round(seconds * 1000, 0);
      measured[`${side}LongestWaitMs`] = round(waits[0]!, 0);
    }
    rows.push({ input: c.input, ...measured });
  }
  // The most skills and files a collection may hold, 20 folders deep: finding each skill's files read every
  // entry once a skill (13 s before skillFilesOf).
  const files = new Map<string, Buffer>();
  const dirs = new Set<string>();
  for (let i = 0; i < 1_000; i++) {
    const folder = [...Array.from({ length: 20 }, (_, d) => `d${d}`), `s${i}`].join('/');
    for (let d = folder.indexOf('/'); d > 0; d = folder.indexOf('/', d + 1)) dirs.add(folder.slice(0, d));
    dirs.add(folder);
    files.set(`${folder}/SKILL.md`, Buffer.from(`---\nname: s${i}\ndescription: Does thing ${i}.\n---\n`));
    for (let f = 0; f < 9; f++) files.set(`${folder}/f${f}.md`, Buffer.from('x'));
  }
  const deep = await watchLoop(() =>
    validateCollection({ files, dirs, unpackedBytes: 0 }, target, DEFAULT_PUBLISH_LIMITS),
  );
  rows.push({
    input: 'publish: 1,000 skills 20 folders deep, 10,000 files',
    threadMs: round(deep.seconds * 1000, 0),
    threadLongestWaitMs: round(deep.waits[0]!, 0),
  });
  return rows;
}

export async function run(_args: string[]): Promise<void> {
  const publish = await publishRows();
  printTable(publish);
  const rows = cases.map((c) => {
    const hostileMs = time(c.read, c.hostile, 5);
    const plainMs = time(c.read, c.plain, 5);
    return {
      input: c.name,
      characters: c.hostile.length,
      hostileMs: round(hostileMs, 2),
      plainMs: round(plainMs, 2),
      'hostile/plain': round(hostileMs / Math.max(plainMs, 0.01), 1),
    };
  });
  writeResult('hostile-input', rows, { publish });
}
