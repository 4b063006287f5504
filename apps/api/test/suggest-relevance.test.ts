/**
 * The suggestion relevance suite (SPEC 2.7): 30 agent messages of its own (not the benchmark's set), over
 * the shared-corpus repositories they draw on, scored like `npm run bench -- suggest`. Floors sit a little
 * under the measured figures, so a change that makes suggestions find the right skill less often, or
 * abstain where they should not (or fail to where they should), fails the tests. With SUGGEST_SUITE_EXPLAIN set
 * to a file, it also writes the suite's explain lines there, for `fit-rerank.py --check` (a refit's figures
 * on this suite before it is shipped).
 */
import { writeFileSync } from 'node:fs';
import { loadSearchDocuments } from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  copyKeys,
  explainLine,
  figuresByKind,
  type MessageJudgement,
} from '../../../bench/suggest/judgements.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { createMemoryEngine } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { calibrated, rerankValue, shownScore, taskPrior } from '../src/suggest/abstain.js';
import { createSuggestEngine } from '../src/suggest/engine.js';
import { seedCorpus } from './support/seed.js';

const REPOS = [
  'anthropics/skills',
  'ComposioHQ/awesome-claude-skills',
  'obra/superpowers',
  'getsentry/skills',
  'mattpocock/skills',
  'anthropics/knowledge-work-plugins',
  'hashicorp/agent-skills',
  'vercel-labs/agent-skills',
];
const A: Record<string, string> = {
  AS: 'gh:anthropics/skills/skills',
  CH: 'gh:ComposioHQ/awesome-claude-skills',
  OB: 'gh:obra/superpowers/skills',
  GS: 'gh:getsentry/skills/skills',
  MP: 'gh:mattpocock/skills/skills',
  KWP: 'gh:anthropics/knowledge-work-plugins',
  HC: 'gh:hashicorp/agent-skills',
  VL: 'gh:vercel-labs/agent-skills/skills',
};
const id = (entry: string) => {
  const slash = entry.indexOf('/');
  return `${A[entry.slice(0, slash)]}${entry.slice(slash)}`;
};
const DEBUG = ['OB/systematic-debugging', 'MP/engineering/diagnosing-bugs', 'KWP/engineering/skills/debug'];

type Row = [string, MessageJudgement['kind'], string, string[], string[][]?];
const MESSAGES: Row[] = [
  [
    'd1',
    'direct',
    'Generate a changelog from the git commits since v1.4 for the release notes',
    ['CH/changelog-generator'],
  ],
  [
    'd2',
    'direct',
    'Write the PR description for my branch, it adds rate limiting to the API',
    ['GS/pr-writer'],
  ],
  [
    'd3',
    'direct',
    "I'm stuck in a rebase with merge conflicts in three files, help me resolve them",
    ['MP/engineering/resolving-merge-conflicts'],
  ],
  [
    'd4',
    'direct',
    'Make an animated GIF for Slack of our mascot waving',
    ['AS/slack-gif-creator', 'CH/slack-gif-creator'],
  ],
  [
    'd5',
    'direct',
    'Build an MCP server that exposes our internal ticket API',
    ['AS/mcp-builder', 'CH/mcp-builder'],
  ],
  [
    'd6',
    'direct',
    'Test my local web app with Playwright and take screenshots of the login page',
    ['AS/webapp-testing', 'CH/webapp-testing'],
  ],
  [
    'd7',
    'direct',
    'Draft an offer letter for the senior designer we are hiring',
    ['KWP/human-resources/skills/draft-offer'],
  ],
  [
    'd8',
    'direct',
    'Plan the next sprint with the team: capacity, priorities and the backlog',
    ['KWP/product-management/skills/sprint-planning'],
  ],
  [
    'd9',
    'direct',
    'Review our GitHub Actions workflows for security problems like script injection',
    ['GS/gha-security-review'],
  ],
  ['d10', 'direct', 'Write a commit message for these staged changes', ['GS/commit']],
  [
    'd11',
    'direct',
    'Deploy this Next.js app to Vercel',
    ['VL/deploy-to-vercel', 'VL/vercel-cli-with-tokens'],
  ],
  [
    'd12',
    'direct',
    'Write the Terraform for an S3 bucket following the HashiCorp style guide',
    ['HC/terraform/code-generation/skills/terraform-style-guide'],
  ],
  [
    'i1',
    'indirect',
    'My CV should line up better with the job ad I am applying to',
    ['CH/tailored-resume-generator'],
  ],
  [
    'i2',
    'indirect',
    'There is a bug that only shows up sometimes and I cannot work out where it comes from, dig into it properly',
    DEBUG,
  ],
  [
    'i3',
    'indirect',
    'Our site went down for two hours last night, write up what happened and what we learned',
    ['KWP/engineering/skills/incident-response'],
  ],
  [
    'i4',
    'indirect',
    'Help me brainstorm names and available domains for my new bakery startup',
    ['CH/domain-name-brainstormer'],
  ],
  [
    'i5',
    'indirect',
    'We have 300 entries in the giveaway spreadsheet, pick one at random fairly',
    ['CH/raffle-winner-picker'],
  ],
  [
    'i6',
    'indirect',
    'My downloads folder is a mess of installers and screenshots, tidy it up',
    ['CH/file-organizer'],
  ],
  [
    'i7',
    'indirect',
    'Write the failing tests first and only then the code for the new parser',
    ['OB/test-driven-development', 'MP/engineering/tdd'],
  ],
  [
    'i8',
    'indirect',
    'Before I sign this vendor agreement, go through the clauses and flag the risky ones',
    [
      'KWP/legal/skills/review-contract',
      'KWP/small-business/skills/contract-review',
      'KWP/small-business/skills/review-contract',
    ],
  ],
  [
    'm1',
    'multi',
    'Write a postmortem for the outage, and also draft the offer letter for our new SRE',
    ['KWP/engineering/skills/incident-response', 'KWP/human-resources/skills/draft-offer'],
    [['KWP/engineering/skills/incident-response'], ['KWP/human-resources/skills/draft-offer']],
  ],
  [
    'm2',
    'multi',
    'Generate the changelog for this release. Then write a commit message for the version bump.',
    ['CH/changelog-generator', 'GS/commit'],
    [['CH/changelog-generator'], ['GS/commit']],
  ],
  [
    'm3',
    'multi',
    'Make a Slack GIF celebrating the launch and then build an MCP server for our launch metrics',
    ['AS/slack-gif-creator', 'CH/slack-gif-creator', 'AS/mcp-builder', 'CH/mcp-builder'],
    [
      ['AS/slack-gif-creator', 'CH/slack-gif-creator'],
      ['AS/mcp-builder', 'CH/mcp-builder'],
    ],
  ],
  [
    'm4',
    'multi',
    'Resolve the merge conflicts from my rebase. Also write the PR description once it is clean.',
    ['MP/engineering/resolving-merge-conflicts', 'GS/pr-writer'],
    [['MP/engineering/resolving-merge-conflicts'], ['GS/pr-writer']],
  ],
  ['n1', 'none', 'thanks, that worked!', []],
  ['n2', 'none', 'ok cool, sounds good 👍', []],
  ['n3', 'none', 'lol nice one', []],
  ['n4', 'none', 'Great, perfect. That is all for today, bye!', []],
  ['n5', 'none', '> Sent from my phone\n> see you then\n\nyes', []],
  ['n6', 'none', 'hmm ok', []],
];

/**
 * Measured on this suite: success@1 0.875, recall@5 0.91 over the answerable messages (multi: one of the
 * two needs covered in the first five, 0.5), false abstention 0.042 (1 of 24), abstention 1.0 on kind none.
 * Floors a little under (one message more may miss each; false abstention held where it was). The LSA's
 * random matrix decides borderline messages: over 9 seeds, drawn per term (shipped since the sixteenth
 * session) or in vocabulary order (before), success@1 was 0.958 five times, 0.917 three times and 0.875
 * once for each way, and recall@5 0.91-0.95 per term but 0.868-0.95 in vocabulary order. The shipped seed
 * is the 0.875 of the per-term draws ("Write a commit message for these staged changes" puts the
 * pre-commit setup skill 0.01 over the commit skill; "My CV should line up better with the job ad"
 * abstains); success@1's floor was 0.91 while the vocabulary-order draw scored 0.958.
 */
const FLOORS = { successAt1: 0.83, recallAt5: 0.9, abstentionOnNone: 0.83, falseAbstention: 0.05 };

let db: TestDatabase;
let figures: ReturnType<typeof figuresByKind>;
/** Per answered message: the scores its results show, and its best candidate's shown and Platt scores. */
const shown: { scores: number[]; expectedFirst: number; plattFirst: number }[] = [];
beforeAll(async () => {
  db = await createTestDatabase('suggest_relevance');
  await seedCorpus(db.db, REPOS, {});
  const memory = createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 30 });
  await memory.build();
  const explainTo = process.env.SUGGEST_SUITE_EXPLAIN;
  // Explained always: the shown scores are checked against the candidates' values below.
  const engine = createSuggestEngine(db.db, memory, { maxBytes: 2 ** 30, explain: true });
  await engine.build();
  const copyKey = copyKeys(await loadSearchDocuments(db.db, 0, 100_000));
  const explained: Record<string, unknown>[] = [];
  const results: { judgement: MessageJudgement; answer: Answer }[] = [];
  for (const [key, kind, message, relevant, needs] of MESSAGES) {
    const judgement: MessageJudgement = {
      id: key,
      kind,
      message,
      relevant: relevant.map(id),
      ...(needs ? { needs: needs.map((n) => n.map(id)) } : {}),
    };
    const s = await engine.suggest(message, { isAdmin: false, readableNamespaces: [] }, 10);
    results.push({
      judgement,
      answer: { ranking: s.results.map((r) => r.hit.identity), abstained: s.abstained },
    });
    if (!s.abstained) {
      const values = s.explained!.map((c) => rerankValue(c.evidence));
      const best = Math.max(...values);
      shown.push({
        scores: s.results.map((r) => r.score),
        expectedFirst: Math.round(shownScore(best, best) * taskPrior(s.task!) * 1000) / 1000,
        plattFirst: calibrated(best) * taskPrior(s.task!),
      });
    }
    if (explainTo) explained.push(explainLine(judgement, s, copyKey));
  }
  if (explainTo) writeFileSync(explainTo, `${explained.map((e) => JSON.stringify(e)).join('\n')}\n`);
  figures = figuresByKind(results, copyKey);
  await engine.close();
  await memory.close();
}, 240_000);
afterAll(async () => db?.drop());

describe('suggestion relevance suite', () => {
  it('holds 30 messages of four kinds', () => {
    expect(MESSAGES).toHaveLength(30);
    for (const kind of ['direct', 'indirect', 'multi', 'none'] as const)
      expect(figures[kind].messages).toBeGreaterThan(3);
  });

  it('finds the right skill first and in the first five, above its floors', () => {
    expect(figures.answerable.successAt1).toBeGreaterThanOrEqual(FLOORS.successAt1);
    expect(figures.answerable.recallAt5).toBeGreaterThanOrEqual(FLOORS.recallAt5);
  });

  it("shows each result's chance given the best candidate beside it: the first the best's, the rest no more", () => {
    expect(shown.length).toBeGreaterThan(20);
    for (const { scores, expectedFirst } of shown) {
      expect(scores[0]).toBe(expectedFirst);
      for (const score of scores) expect(score).toBeLessThanOrEqual(scores[0]!);
    }
    // Platt pooled over every candidate under-states the best one: the shown first score is above it.
    expect(shown.filter((s) => s.plattFirst < 0.5).every((s) => s.scores[0]! > s.plattFirst)).toBe(true);
  });

  it('abstains on messages with no skill need, and (almost) never on the others', () => {
    expect(figures.none.abstained).toBeGreaterThanOrEqual(FLOORS.abstentionOnNone);
    expect(figures.answerable.abstained).toBeLessThanOrEqual(FLOORS.falseAbstention);
  });
});
