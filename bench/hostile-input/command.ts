/**
 * `npm run bench -- hostile-input`: the inputs that once held the hub or the crawler for seconds to minutes
 * (docs/security.md, "Patterns that run in linear time"), each timed through the function that reads it
 * against a plain input of the same length through the same function, in this process: linear code keeps
 * the ratio small, a pattern that backtracks over a run makes it thousands. Writes
 * bench/results/hostile-input.json.
 */
import { parseGithubRepository, scanText } from '@atskills/protocol';
import { extractNeeds, taskSignal } from '../../apps/api/src/suggest/needs.js';
import { writeResult } from '../lib/report.js';
import { median, round } from '../lib/stats.js';

/** A plain message of `length` characters: words and spaces, as a user types them. */
const prose = (length: number) =>
  'please review the deploy script and fix the failing lint step in our pipeline '
    .repeat(length)
    .slice(0, length);

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
  {
    name: 'safety scan, one 256 KiB line: "IRM-" x 65,536',
    hostile: 'IRM-'.repeat(SCAN_LINE / 4),
    plain: prose(SCAN_LINE),
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

export async function run(_args: string[]): Promise<void> {
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
  writeResult('hostile-input', rows);
}
