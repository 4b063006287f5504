import {
  type Identity,
  parseIdentity,
  type ResolveRequest,
  type ResolveResponseItem,
} from '@atskills/protocol';
import { type CacheEntryMeta, listTriggers } from '@atskills/protocol/node';
import { EXIT, type ExitCode } from './exit-codes.js';
import { readInventory } from './inventory.js';

/** One checked identity: a row of `atskills outdated` (its `--json` items, field for field). */
export interface OutdatedRow {
  identity: string;
  /** saved: a copy in .atskills/ (maybe installed too); installed: followed by .autotrigger, not saved. */
  kind: 'saved' | 'installed';
  installed: boolean;
  status:
    | 'up-to-date'
    | 'outdated'
    | 'gone'
    | 'not-found'
    | 'moved'
    | 'not-cached'
    | 'unknown'
    /** An `.autotrigger` line that selects no skill (a folder written without its `/`, a typo). */
    | 'no-match';
  /** What the project (saved) or the cache (installed) holds. */
  held?: string;
  latest?: string;
  /** Who answered: the hub's batch resolve, or `git ls-remote` for gh: the hub does not hold. */
  via: 'hub' | 'git';
  detail?: string;
}

/**
 * What the check asks beyond the project folder. The command fills it with the resolver's cache, the hub
 * client and `git ls-remote`; tests with an upstream held in memory.
 */
export interface OutdatedSources {
  /** The cache's metadata for an identity, if it holds a usable entry. */
  cached(identity: string): Promise<CacheEntryMeta | undefined>;
  /** The hub's `POST /v1/resolve` answer for at most 128 items; throws when the hub cannot answer. */
  resolve(items: ResolveRequest['items']): Promise<ResolveResponseItem[]>;
  /** The default branch's head commit of a `gh:` identity's repository; throws `not-found` when there is none. */
  headCommit(id: Identity): Promise<string>;
}

/** The rows and their tallies. */
export interface OutdatedReport {
  rows: OutdatedRow[];
  /** Rows that need doing something about: outdated, gone, not found, moved, or selecting nothing. */
  outdated: number;
  /** Rows that could not be checked (hub or git unreachable). */
  unchecked: number;
}

/** One identity to check, with what the project or the cache holds of it. */
interface Target {
  identity: string;
  id: Identity;
  kind: OutdatedRow['kind'];
  installed: boolean;
  /** Sent to the hub as the revision held (hub: the revision; gh: the folder's tree sha when known). */
  held?: string;
  /** gh: the commit held, for the `git ls-remote` comparison. */
  commit?: string;
  /** What to show as held. */
  shown?: string;
  /** An installed line naming the identity as one skill (no trailing `/`). */
  skillLine?: boolean;
  /** The cache holds the identity as a menu. */
  cachedMenu?: boolean;
}

/** The hub's batch resolve takes at most this many identities per request. */
const BATCH = 128;

/** A moved skill needs its reference changed: as out of date as a gone one. */
const NEEDS_ACTION: readonly OutdatedRow['status'][] = ['outdated', 'gone', 'not-found', 'moved', 'no-match'];

/**
 * Checks every saved and installed cloud skill of the project against upstream (read-only): one hub
 * resolve per 128 identities, `git ls-remote` for `gh:` the hub does not hold, and the `.autotrigger`
 * lines that select no skill.
 */
export async function checkOutdated(projectDir: string, sources: OutdatedSources): Promise<OutdatedReport> {
  const targets = await targetsOf(projectDir, sources);
  const { answers, failure } = await askHub(targets, sources);
  const rows: OutdatedRow[] = await unmatchedLines(projectDir);
  for (const t of targets) rows.push(await rowFor(t, answers.get(t.identity), failure, sources));
  return {
    rows,
    outdated: rows.filter((r) => NEEDS_ACTION.includes(r.status)).length,
    unchecked: rows.filter((r) => r.status === 'unknown').length,
  };
}

/** Exit 8 when something needs action, else 4 when something could not be checked, else 0. */
export function outdatedExitCode(report: OutdatedReport): ExitCode {
  if (report.outdated > 0) return EXIT.outdated;
  return report.unchecked > 0 ? EXIT.unreachable : EXIT.ok;
}

/** The saved skills (with a readable stamp), then the installed cloud lines not saved too. */
async function targetsOf(projectDir: string, sources: OutdatedSources): Promise<Target[]> {
  const inventory = await readInventory(projectDir);
  const targets: Target[] = [];
  for (const s of inventory.saved) {
    if (s.stampProblem) continue;
    const id = parseIdentity(s.identity);
    const target: Target = {
      identity: s.identity,
      id,
      kind: 'saved',
      installed: s.installed,
      shown: s.revision,
    };
    if (id.source === 'hub') target.held = s.revision;
    else {
      target.commit = s.revision;
      // The hub compares gh: by the folder's tree sha, which only the cache knows for the saved commit.
      const meta = await sources.cached(s.identity);
      const tree =
        meta?.revision === s.revision
          ? meta.contentKey
          : meta?.previous?.revision === s.revision
            ? meta.previous.contentKey
            : undefined;
      if (tree) target.held = tree;
    }
    targets.push(target);
  }
  const seen = new Set(targets.map((t) => t.identity));
  for (const line of inventory.installedCloud) {
    if (seen.has(line.identity)) continue;
    seen.add(line.identity);
    const meta = await sources.cached(line.identity);
    const id = parseIdentity(line.identity);
    const target: Target = {
      identity: line.identity,
      id,
      kind: 'installed',
      installed: true,
      skillLine: !line.directory,
      cachedMenu: meta?.kind === 'menu',
    };
    if (meta) {
      target.shown = meta.revision;
      if (id.source === 'hub') target.held = meta.revision;
      else {
        target.commit = meta.revision;
        if (meta.contentKey) target.held = meta.contentKey;
      }
    }
    targets.push(target);
  }
  return targets;
}

/** The hub's answers by identity, one round trip per 128; the first failure stops asking and is kept. */
async function askHub(
  targets: Target[],
  sources: OutdatedSources,
): Promise<{ answers: Map<string, ResolveResponseItem>; failure?: string }> {
  const answers = new Map<string, ResolveResponseItem>();
  for (let i = 0; i < targets.length; i += BATCH) {
    const items = targets
      .slice(i, i + BATCH)
      .map((t) => (t.held ? { identity: t.identity, revision: t.held } : { identity: t.identity }));
    try {
      for (const item of await sources.resolve(items)) answers.set(item.identity, item);
    } catch (error) {
      return { answers, failure: error instanceof Error ? error.message : String(error) };
    }
  }
  return { answers };
}

/** Project lines that select no skill, named like the resident block's warnings (no network). */
async function unmatchedLines(projectDir: string): Promise<OutdatedRow[]> {
  const triggers = await listTriggers({ projectDir, offline: true });
  return triggers.warnings
    .filter((w) => /selects no skill/.test(w.message))
    .map((w) => ({
      identity: w.text,
      kind: 'installed',
      installed: true,
      via: 'git',
      status: 'no-match',
      detail: `line ${w.line} of .atskills/.autotrigger: ${w.message}`,
    }));
}

/** One target's row: the hub's answer when it has one that applies, else `git ls-remote` for gh:. */
async function rowFor(
  t: Target,
  answer: ResolveResponseItem | undefined,
  hubFailure: string | undefined,
  sources: OutdatedSources,
): Promise<OutdatedRow> {
  const isMenu = answer?.status === 'changed' ? answer.kind === 'menu' : t.cachedMenu === true;
  if (t.skillLine && isMenu) {
    // A folder followed as one skill loads nothing: say how to follow it (SPEC 1.5).
    return {
      identity: t.identity,
      kind: 'installed',
      installed: true,
      via: answer ? 'hub' : 'git',
      status: 'no-match',
      detail: `a folder of skills: the line loads nothing; write "@${t.identity}/" (with the slash) to follow every skill in it`,
    };
  }
  const base = {
    identity: t.identity,
    kind: t.kind,
    installed: t.installed,
    ...(t.shown ? { held: t.shown } : {}),
  };
  const isGh = t.id.source === 'gh';
  const hubKnows = answer && answer.status !== 'not-found' && answer.status !== 'error';
  if (answer && hubKnows && (!isGh || t.held)) {
    // For gh: the hub compares tree shas of the skill folder, so show those.
    return { ...base, ...(isGh && t.held ? { held: t.held } : {}), via: 'hub', ...fromHub(answer, t) };
  }
  if (!isGh) {
    return {
      ...base,
      via: 'hub',
      ...(answer ? fromHub(answer, t) : { status: 'unknown', detail: hubFailure ?? 'no answer' }),
    };
  }
  // gh: the hub does not hold (or we cannot name our tree): ask git for the head commit.
  try {
    const head = await sources.headCommit(t.id);
    if (!t.commit) return { ...base, via: 'git', status: 'not-cached', latest: head };
    if (head === t.commit) return { ...base, via: 'git', status: 'up-to-date', latest: head };
    return {
      ...base,
      via: 'git',
      status: 'outdated',
      latest: head,
      detail: 'the repository has new commits (the skill folder may be unchanged; update compares it)',
    };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return {
      ...base,
      via: 'git',
      status: code === 'not-found' ? 'not-found' : 'unknown',
      detail: error instanceof Error ? error.message : String(error),
    };
  }
}

/** The row fields for the hub's answer about one identity. */
function fromHub(answer: ResolveResponseItem, t: Target): Pick<OutdatedRow, 'status' | 'latest' | 'detail'> {
  switch (answer.status) {
    case 'unchanged':
      return { status: 'up-to-date', latest: answer.revision };
    case 'changed':
      return t.held
        ? { status: 'outdated', latest: answer.revision }
        : { status: 'not-cached', latest: answer.revision };
    case 'gone':
      return {
        status: 'gone',
        ...(answer.lastRevision ? { latest: answer.lastRevision } : {}),
        detail: `gone upstream${answer.lastSeen ? `, last seen ${answer.lastSeen.slice(0, 10)}` : ''}`,
      };
    case 'not-found':
      return { status: 'not-found', detail: 'the hub knows no such skill (or it is private to others)' };
    case 'moved':
      return { status: 'moved', detail: `the repository moved: now ${answer.location}` };
    case 'error':
      return { status: 'unknown', detail: `${answer.code}${answer.detail ? `: ${answer.detail}` : ''}` };
  }
}
