import type { ResolveResponseItem } from '@atskills/protocol';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { withoutIdentity } from '../format/resolved.js';
import { shortRev } from '../format/save.js';

/** One checked identity. */
interface OutdatedRow {
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

interface Target {
  identity: string;
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

const BATCH = 128;

/**
 * `atskills outdated [--json]`: a read-only check of every saved and installed cloud skill against
 * upstream, in one `POST /v1/resolve` (per 128), with `git ls-remote` for `gh:` the hub does not hold.
 * Exit 8 when something is out of date or gone, 4 when something could not be checked, else 0.
 */
export function registerOutdated(program: Command, ctx: CliContext): void {
  program
    .command('outdated')
    .description('Check saved and installed cloud skills against upstream (read-only)')
    .option('--json', 'print {"items":[...],"outdated":n}')
    .addHelpText(
      'after',
      '\nExit codes: 0 everything up to date, 8 something changed or is gone upstream, 4 something could\nnot be checked (hub or git unreachable). `atskills update --all` refreshes untouched saved copies.\n\nExample:\n  atskills outdated',
    )
    .action(async (opts: { json?: boolean }) => {
      const [{ parseIdentity, ResolveResponse }, { readInventory }, { hubRequest }] = await Promise.all([
        import('@atskills/protocol'),
        import('../inventory.js'),
        import('../hub-client.js'),
      ]);
      const projectDir = await ctx.projectDir();
      const resolver = await ctx.resolver();
      const inventory = await readInventory(projectDir);
      const targets: Target[] = [];
      for (const s of inventory.saved) {
        if (s.stampProblem) continue;
        const id = parseIdentity(s.identity);
        const target: Target = {
          identity: s.identity,
          kind: 'saved',
          installed: s.installed,
          shown: s.revision,
        };
        if (id.source === 'hub') target.held = s.revision;
        else {
          target.commit = s.revision;
          const meta = (await resolver.cache.read(s.identity))?.meta;
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
      const savedIds = new Set(targets.map((t) => t.identity));
      for (const line of inventory.installedCloud) {
        if (savedIds.has(line.identity)) continue;
        savedIds.add(line.identity);
        const meta = (await resolver.cache.read(line.identity))?.meta;
        const id = parseIdentity(line.identity);
        const target: Target = {
          identity: line.identity,
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

      // One round trip per 128 identities: the hub answers what changed and what did not.
      const answers = new Map<string, ResolveResponseItem>();
      let hubFailure: string | undefined;
      const settings = await ctx.settings();
      for (let i = 0; i < targets.length && !hubFailure; i += BATCH) {
        const items = targets
          .slice(i, i + BATCH)
          .map((t) => (t.held ? { identity: t.identity, revision: t.held } : { identity: t.identity }));
        try {
          const raw = await hubRequest(settings, 'POST', '/v1/resolve', {
            body: Buffer.from(JSON.stringify({ items })),
            contentType: 'application/json',
          });
          const parsed = ResolveResponse.safeParse(raw);
          if (!parsed.success)
            throw new Error("the hub's answer to POST /v1/resolve does not match the protocol");
          for (const item of parsed.data.items) answers.set(item.identity, item);
        } catch (error) {
          hubFailure = error instanceof Error ? error.message : String(error);
        }
      }

      const rows: OutdatedRow[] = [];
      // Project lines that select no skill: named like the resident block's warnings (no network).
      const { listTriggers } = await import('@atskills/protocol/node');
      const triggers = await listTriggers({ projectDir, offline: true });
      for (const w of triggers.warnings)
        if (/selects no skill/.test(w.message))
          rows.push({
            identity: w.text,
            kind: 'installed',
            installed: true,
            via: 'git',
            status: 'no-match',
            detail: `line ${w.line} of .atskills/.autotrigger: ${w.message}`,
          });
      for (const t of targets) {
        const answer0 = answers.get(t.identity);
        const isMenu = answer0?.status === 'changed' ? answer0.kind === 'menu' : t.cachedMenu === true;
        if (t.skillLine && isMenu) {
          // A folder followed as one skill loads nothing: say how to follow it (SPEC 1.5).
          rows.push({
            identity: t.identity,
            kind: 'installed',
            installed: true,
            via: answer0 ? 'hub' : 'git',
            status: 'no-match',
            detail: `a folder of skills: the line loads nothing; write "@${t.identity}/" (with the slash) to follow every skill in it`,
          });
          continue;
        }
        const base = {
          identity: t.identity,
          kind: t.kind,
          installed: t.installed,
          ...(t.shown ? { held: t.shown } : {}),
        };
        const answer = answers.get(t.identity);
        const isGh = parseIdentity(t.identity).source === 'gh';
        const hubKnows = answer && answer.status !== 'not-found' && answer.status !== 'error';
        if (answer && hubKnows && (!isGh || t.held)) {
          // For gh: the hub compares tree shas of the skill folder, so show those.
          rows.push({
            ...base,
            ...(isGh && t.held ? { held: t.held } : {}),
            via: 'hub',
            ...fromHub(answer, t),
          });
          continue;
        }
        if (!isGh) {
          rows.push({
            ...base,
            via: 'hub',
            ...(answer ? fromHub(answer, t) : { status: 'unknown', detail: hubFailure ?? 'no answer' }),
          });
          continue;
        }
        // gh: the hub does not hold (or we cannot name our tree): ask git for the head commit.
        try {
          const head = await resolver.headCommit(parseIdentity(t.identity));
          if (!t.commit) rows.push({ ...base, via: 'git', status: 'not-cached', latest: head });
          else if (head === t.commit) rows.push({ ...base, via: 'git', status: 'up-to-date', latest: head });
          else
            rows.push({
              ...base,
              via: 'git',
              status: 'outdated',
              latest: head,
              detail:
                'the repository has new commits (the skill folder may be unchanged; update compares it)',
            });
        } catch (error) {
          const code = (error as { code?: string }).code;
          rows.push({
            ...base,
            via: 'git',
            status: code === 'not-found' ? 'not-found' : 'unknown',
            detail: error instanceof Error ? error.message : String(error),
          });
        }
      }

      // A moved skill needs its reference changed: as out of date as a gone one.
      const outdated = rows.filter((r) =>
        ['outdated', 'gone', 'not-found', 'moved', 'no-match'].includes(r.status),
      ).length;
      if (outdated > 0) ctx.fail(EXIT.outdated);
      else if (rows.some((r) => r.status === 'unknown')) ctx.fail(EXIT.unreachable);
      if (opts.json) return ctx.json({ items: rows, outdated });
      if (rows.length === 0) return ctx.out('Nothing saved or installed from the cloud.');
      for (const r of rows) {
        const change =
          r.status === 'outdated' ? `  ${shortRev(r.held ?? '?')} -> ${shortRev(r.latest ?? '?')}` : '';
        const detail = r.detail === undefined ? undefined : withoutIdentity(r.identity, r.detail);
        const why = detail ? `  (${detail})` : '';
        ctx.out(
          `${r.status.padEnd(10)}  ${r.identity}  [${r.kind}${r.kind === 'saved' && r.installed ? ', installed' : ''}]${change}${why}`,
        );
      }
      const unchecked = rows.filter((r) => r.status === 'unknown').length;
      const parts = [
        ...(outdated > 0 ? [`${outdated} out of date or gone`] : []),
        ...(unchecked > 0 ? [`${unchecked} could not be checked`] : []),
      ];
      ctx.out(
        `${rows.length} checked: ${parts.length === 0 ? 'everything is up to date' : parts.join(', ')}.`,
      );
      if (rows.some((r) => r.kind === 'saved' && r.status === 'outdated'))
        ctx.out('Run `atskills update --all` to refresh the untouched saved copies.');
    });
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
