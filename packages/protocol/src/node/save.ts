import { randomBytes } from 'node:crypto';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { refusingVerdict } from '../frame.js';
import { diskPath, type Identity, parseIdentity } from '../identity.js';
import { formatSourceStamp, type SourceStamp } from '../source-stamp.js';
import { isMissing, walkFolder } from './fs-tree.js';
import { ResolveError, type ResolveErrorCode } from './resolve-error.js';
import type { ResolvedSkill, Resolver } from './resolver.js';
import { readSourceStamp, SOURCE_FILE } from './source-file.js';

/** What to do when a re-save finds the project's copy edited (or cannot verify it). */
export type ConflictChoice = 'keep' | 'refetch' | 'merge';

/** One file of a version, for `merge` (text for the agent to merge; binary files are named only). */
export interface VersionFile {
  path: string;
  text?: string;
  size: number;
}

/** What a save did. */
export interface SaveOutcome {
  action: 'saved' | 'refreshed' | 'up-to-date' | 'kept' | 'overwritten' | 'merge';
  identity: string;
  /** The revision the project copy now has (for keep/merge: unchanged). */
  revision: string;
  /** The latest upstream revision. */
  latestRevision: string;
  dir: string;
  stale: boolean;
  staleReason?: string;
  /** The failed check's code when the copy was saved from a stale cache. */
  staleCode?: ResolveErrorCode;
  /** On a conflict: why, and which files differ from upstream at the recorded revision. */
  conflict?: { reason: string; changed: string[]; recordedRevision?: string };
  /** For `merge`: both versions. */
  merge?: { local: VersionFile[]; upstream: VersionFile[] };
}

/** Options of a save. */
export interface SaveOptions {
  projectDir: string;
  offline?: boolean;
  /** Unset: a conflict throws ResolveError 'conflict' and touches nothing. */
  onConflict?: ConflictChoice;
  /** The date written into `.source` (tests pin it); default today (UTC). */
  today?: string;
  /** A hook's budget (ResolveOptions.deadline): past it nothing more is fetched; the cache answers. */
  deadline?: number;
}

/**
 * `:save` (SPEC 1.5): copies the cloud skill to `.atskills/<disk path>/` with a `.source` stamp. Saving
 * again refreshes: the upstream files at the recorded revision are compared byte for byte with the copy;
 * identical -> replaced by the latest; edited or unverifiable -> a conflict, resolved by `onConflict`.
 */
export async function saveSkill(
  resolver: Resolver,
  identity: string | Identity,
  options: SaveOptions,
): Promise<SaveOutcome> {
  const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
  if (id.source === 'local') {
    throw new ResolveError(
      'usage',
      `${id.identity} is already a project skill; only gh: and hub: skills are saved.`,
    );
  }
  const latest = await resolver.resolve(id, {
    projectDir: options.projectDir,
    offline: options.offline ?? false,
    skipLocal: true,
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
  });
  if (latest.kind !== 'skill') {
    const some = latest.items
      .slice(0, 3)
      .map((i) => `\n  atskills save ${i.identity}`)
      .join('');
    throw new ResolveError(
      'usage',
      `${id.identity} is a menu of ${latest.items.length} skills; save one skill at a time:${some}`,
    );
  }
  // A copy in the project would be read as the project's own text, unframed by any verdict (SPEC 2.8).
  const verdict = refusingVerdict(latest.flags);
  if (verdict) {
    throw new ResolveError(
      'refused',
      `${id.identity} was not saved: the hub judged it malicious (${verdict}).`,
      { identity: id.identity, flags: latest.flags },
    );
  }
  const dest = path.join(options.projectDir, diskPath(id));
  const today = options.today ?? new Date().toISOString().slice(0, 10);
  const stamp: SourceStamp = { identity: id.identity, date: today, revision: latest.revision };
  const outcome = (
    action: SaveOutcome['action'],
    revision: string,
    extra: Partial<SaveOutcome> = {},
  ): SaveOutcome => ({
    action,
    identity: id.identity,
    revision,
    latestRevision: latest.revision,
    dir: dest,
    stale: latest.stale,
    ...(latest.staleReason ? { staleReason: latest.staleReason } : {}),
    ...(latest.staleCode ? { staleCode: latest.staleCode } : {}),
    ...extra,
  });

  const localFiles = await filesOf(dest);
  if (localFiles.size === 0) {
    await replaceFolder(dest, latest, stamp);
    return outcome('saved', latest.revision);
  }

  const pastDeadline = options.deadline !== undefined && Date.now() >= options.deadline;
  const check = await verifyAgainstRecorded(resolver, id, dest, localFiles, pastDeadline);
  if (check.identical) {
    if (check.recorded === latest.revision) return outcome('up-to-date', latest.revision);
    await replaceFolder(dest, latest, stamp);
    return outcome('refreshed', latest.revision);
  }
  const conflict = {
    reason: check.reason,
    changed: check.changed,
    ...(check.recorded ? { recordedRevision: check.recorded } : {}),
  };
  const current = check.recorded ?? 'unknown';
  switch (options.onConflict) {
    case 'keep':
      return outcome('kept', current, { conflict });
    case 'refetch':
      await replaceFolder(dest, latest, stamp);
      return outcome('overwritten', latest.revision, { conflict });
    case 'merge':
      return outcome('merge', current, {
        conflict,
        merge: { local: await versionFiles(dest), upstream: await versionFiles(latest.dir) },
      });
    default:
      throw new ResolveError(
        'conflict',
        `${diskPath(id)} ${check.reason}; nothing was changed. Choose: --on-conflict keep (leave it), refetch (overwrite with ${short(latest.revision)}) or merge (print both versions).`,
        { identity: id.identity, latestRevision: latest.revision, ...conflict },
      );
  }
}

/** Whether a saved copy is still what was saved: compared byte for byte with upstream at its `.source` revision. */
export interface SavedCopyCheck {
  state: 'unedited' | 'edited' | 'unverifiable';
  /** The revision `.source` records, when it could be read. */
  recorded?: string;
  reason?: string;
  changed: string[];
}

/**
 * Checks the project's saved copy of a cloud identity against upstream at the revision its `.source`
 * records (from the cache when it holds that revision; fetched otherwise, unless `offline`). Touches nothing.
 */
export async function checkSavedCopy(
  resolver: Resolver,
  identity: string | Identity,
  options: { projectDir: string; offline?: boolean },
): Promise<SavedCopyCheck> {
  const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
  const dest = path.join(options.projectDir, diskPath(id));
  const check = await verifyAgainstRecorded(resolver, id, dest, await filesOf(dest), options.offline);
  if (check.identical) return { state: 'unedited', recorded: check.recorded, changed: [] };
  return {
    state: check.changed.length > 0 ? 'edited' : 'unverifiable',
    ...(check.recorded ? { recorded: check.recorded } : {}),
    reason: check.reason,
    changed: check.changed,
  };
}

type Verification =
  | { identical: true; recorded: string }
  | { identical: false; reason: string; changed: string[]; recorded?: string };

/** Compares the project copy with upstream at the revision its `.source` records. */
async function verifyAgainstRecorded(
  resolver: Resolver,
  id: Identity,
  dest: string,
  localFiles: Map<string, Buffer>,
  offline = false,
): Promise<Verification> {
  let stamp: SourceStamp;
  try {
    stamp = await readSourceStamp(dest);
  } catch (error) {
    const why = isMissing(error) ? 'has no .source stamp' : 'has an unreadable .source stamp';
    return { identical: false, reason: `${why}, so its origin cannot be verified`, changed: [] };
  }
  if (stamp.identity !== id.identity) {
    return {
      identical: false,
      reason: `was saved from ${stamp.identity}, not ${id.identity}`,
      changed: [],
      recorded: stamp.revision,
    };
  }
  let upstreamDir: string;
  try {
    upstreamDir = await resolver.contentAt(id, stamp.revision, { offline });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      identical: false,
      reason: `cannot be verified against upstream at ${short(stamp.revision)} (${why})`,
      changed: [],
      recorded: stamp.revision,
    };
  }
  const upstream = await filesOf(upstreamDir);
  const changed = [...new Set([...localFiles.keys(), ...upstream.keys()])]
    .filter((p) => {
      const a = localFiles.get(p);
      const b = upstream.get(p);
      return !a || !b || !a.equals(b);
    })
    .sort();
  if (changed.length === 0) return { identical: true, recorded: stamp.revision };
  return {
    identical: false,
    reason: `was edited since it was saved at ${short(stamp.revision)} (${changed.join(', ')})`,
    changed,
    recorded: stamp.revision,
  };
}

/**
 * Whether a file of a skill's tree is left out of a saved copy, so also out of the comparison: the top-level
 * `.source` (ours replaces a skill's own, so the skill's is never compared against our stamp) and anything
 * under a nested `.atskills/` (a skill's own project folder would be read as project skills).
 */
function isLeftOut(relPath: string): boolean {
  return relPath === SOURCE_FILE || relPath.split('/').includes(NESTED_PROJECT);
}

const NESTED_PROJECT = '.atskills';

/** Every regular file of a folder by relative path; symlinks and specials count as content that differs. */
async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const entry of await walkFolder(dir)) {
    if (entry.type === 'dir') continue;
    if (isLeftOut(entry.path)) continue;
    out.set(
      entry.path,
      entry.type === 'file' ? await readFile(path.join(dir, entry.path)) : Buffer.from(`\0${entry.type}`),
    );
  }
  return out;
}

async function versionFiles(dir: string): Promise<VersionFile[]> {
  const out: VersionFile[] = [];
  for (const [rel, bytes] of await filesOf(dir)) {
    const text = bytes.includes(0) ? undefined : bytes.toString('utf8');
    out.push(
      text === undefined ? { path: rel, size: bytes.length } : { path: rel, text, size: bytes.length },
    );
  }
  return out;
}

/** Puts the latest upstream copy at `dest` with its stamp, swapping folders so no half copy is ever seen. */
async function replaceFolder(dest: string, latest: ResolvedSkill, stamp: SourceStamp): Promise<void> {
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const staged = `${dest}.atskills-new-${tag}`;
  const old = `${dest}.atskills-old-${tag}`;
  await mkdir(path.dirname(dest), { recursive: true });
  try {
    await cp(latest.dir, staged, {
      recursive: true,
      verbatimSymlinks: true,
      // A nested `.atskills/` never lands in the project (it would add its skills to ours).
      filter: (from) => !isLeftOut(path.relative(latest.dir, from).split(path.sep).join('/')),
    });
    await writeFile(path.join(staged, SOURCE_FILE), formatSourceStamp(stamp));
    let moved = false;
    try {
      await rename(dest, old);
      moved = true;
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    await rename(staged, dest);
    if (moved) await rm(old, { recursive: true, force: true });
  } finally {
    await rm(staged, { recursive: true, force: true });
  }
}

function short(revision: string): string {
  return /^[0-9a-f]{40,64}$/.test(revision) ? revision.slice(0, 12) : revision;
}
