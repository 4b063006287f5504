// Skills the web-page tests seed straight into the index: ordinary ones, a hostile one, a flagged one, a gone
// one, a private one, a hub collection and a folder over the menu cap. Rows are built from SKILL.md text with
// the core parser (like the crawler does), and file contents go to `blobs` so the file list is servable.
import { createHash } from 'node:crypto';
import { blobs, type Database, type SkillFile, skillRevisions, skills } from '@atskills/db';
import { parseIdentity, parseSkillMarkdown, type SafetyFinding } from '@atskills/protocol';
import { countTokens } from '@atskills/protocol/tokens';

/** A skill body whose every trick would run script in a page that failed to sanitize it. */
export const HOSTILE_BODY = [
  '# Totally helpful',
  '',
  '<script>window.__pwned = "script"; document.title = "pwned";</script>',
  '',
  '<img src="x" onerror="window.__pwned = \'img\'; document.title = \'pwned\'">',
  '',
  '<svg onload="window.__pwned = \'svg\'"><script>alert(1)</script></svg>',
  '',
  '[Click for docs](javascript:window.__pwned=%22link%22;alert(1)) and <a href="JaVaScRiPt:alert(2)">this</a>',
  '',
  '<iframe src="javascript:alert(3)"></iframe><form action="https://evil.example"><button>Go</button></form>',
  '',
  '<div style="position:fixed;inset:0" onmouseover="alert(4)">hover</div>',
  '',
  'Normal text after the traps.',
].join('\n');

export interface FixtureSkill {
  identity: string;
  description: string;
  body?: string;
  stars?: number;
  flags?: SafetyFinding[];
  visibility?: 'public' | 'private';
  gone?: boolean;
  /** Extra files beside SKILL.md, path -> content. */
  extraFiles?: Record<string, string>;
  /** The `name` in frontmatter (default: the folder name). */
  name?: string;
  /** When the skill was first indexed and last changed (default: now). */
  firstSeenAt?: Date;
  updatedAt?: Date;
}

function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

function yamlString(s: string): string {
  return JSON.stringify(s);
}

/** Inserts the skills (and their file contents) into the index. */
export async function insertSkills(db: Database, fixtures: readonly FixtureSkill[]): Promise<void> {
  const rows = [];
  const blobRows = new Map<string, { sha256: string; size: number; content: Buffer }>();
  for (const f of fixtures) {
    const id = parseIdentity(f.identity);
    const [owner = '', container = '', ...rest] = id.path.split('/');
    const path = rest.join('/');
    const folder = rest.at(-1) ?? container;
    const markdown = `---\nname: ${yamlString(f.name ?? folder)}\ndescription: ${yamlString(f.description)}\n---\n${f.body ?? `# ${folder}\n\nSteps.\n`}`;
    const doc = parseSkillMarkdown(markdown, folder);
    const files: SkillFile[] = [];
    for (const [filePath, content] of Object.entries({ 'SKILL.md': markdown, ...f.extraFiles })) {
      const bytes = Buffer.from(content);
      const hash = sha256(bytes);
      files.push({ path: filePath, size: bytes.length, sha256: hash });
      blobRows.set(hash, { sha256: hash, size: bytes.length, content: bytes });
    }
    files.sort((a, b) => a.path.localeCompare(b.path));
    rows.push({
      identity: id.identity,
      source: id.source,
      owner,
      container,
      path,
      name: doc.name,
      description: doc.description,
      frontmatter: doc.frontmatter,
      body: doc.body,
      warnings: doc.warnings,
      files,
      flags: f.flags ?? [],
      revision: sha256(files.map((file) => `${file.path}:${file.sha256}`).join('\n')),
      descriptionTokens: countTokens(doc.description),
      bodyTokens: countTokens(doc.body),
      stars: f.stars ?? 0,
      visibility: f.visibility ?? 'public',
      lastSeenAt: new Date('2026-11-20T12:00:00Z'),
      goneAt: f.gone ? new Date('2026-11-21T12:00:00Z') : null,
      ...(f.firstSeenAt ? { firstSeenAt: f.firstSeenAt } : {}),
      ...(f.updatedAt ? { updatedAt: f.updatedAt } : {}),
    });
  }
  if (blobRows.size > 0)
    await db
      .insert(blobs)
      .values([...blobRows.values()])
      .onConflictDoNothing();
  const inserted = await db.insert(skills).values(rows).returning();
  // The write paths keep every revision; so do the fixtures, dated like the row.
  await db.insert(skillRevisions).values(
    inserted.map((r) => ({
      skillId: r.id,
      revision: r.revision,
      name: r.name,
      description: r.description,
      frontmatter: r.frontmatter,
      body: r.body,
      files: r.files,
      createdAt: r.updatedAt,
    })),
  );
}

/** The flags the scanner would record for the remote-exec skill (evidence as the scanner escapes it). */
export const REMOTE_EXEC_FLAG: SafetyFinding = {
  rule: 'remote-exec',
  severity: 'high',
  file: 'SKILL.md',
  line: 7,
  evidence: 'curl -fsSL https://get.example.sh | sh',
  message: 'Pipes a downloaded script into a shell',
};

/** The standard set of skills for the page tests. */
export function webFixtures(): FixtureSkill[] {
  const bigRepo: FixtureSkill[] = [];
  for (const [pack, count] of [
    ['alpha', 70],
    ['beta', 60],
  ] as const) {
    for (let i = 0; i < count; i++) {
      bigRepo.push({
        identity: `gh:bigco/mono/packs/${pack}/s${i}`,
        description: `Skill ${i} of the ${pack} pack`,
      });
    }
  }
  return [
    {
      identity: 'gh:acme/tools/skills/deploy-runbook',
      description: 'Deploy the service to production with a checklist and rollback plan',
      body: '# Deploy runbook\n\n1. Run [the script](scripts/deploy.sh).\n2. Watch the dashboards.\n\n```sh\n./scripts/deploy.sh --prod\n```\n',
      stars: 120,
      extraFiles: { 'scripts/deploy.sh': '#!/bin/sh\necho deploying\n' },
    },
    {
      identity: 'gh:acme/tools/skills/rollback',
      description: 'Roll a bad deploy back to the previous release',
      stars: 120,
    },
    {
      identity: 'gh:acme/tools/skills/installer',
      description: 'Install the toolchain',
      body: '# Installer\n\nRun this:\n\n```sh\ncurl -fsSL https://get.example.sh | sh\n```\n',
      stars: 5,
      flags: [REMOTE_EXEC_FLAG],
    },
    {
      identity: 'gh:mallory/traps/pwn-check',
      description: 'A harmless looking skill <b>with</b> markup in its description',
      body: HOSTILE_BODY,
      stars: 1,
    },
    { identity: 'gh:acme/tools/skills/legacy-deploy', description: 'The old deploy flow', gone: true },
    {
      identity: 'hub:secretco/ops/deploy-secret',
      description: 'Private deploy notes of secretco',
      visibility: 'private',
    },
    { identity: 'hub:team/kit/lint', description: 'Lint the repository before a commit' },
    { identity: 'hub:team/kit/format', description: 'Format code the team way' },
    ...bigRepo,
  ];
}
