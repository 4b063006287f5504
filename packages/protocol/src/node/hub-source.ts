import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ReadEntry } from 'tar';
import { activeFlagCodes } from '../frame.js';
import type { MenuResponse, ProblemDetails, ResolveResult, SkillResponse } from '../http.js';
import type { Identity } from '../identity.js';
import type { MenuItem } from '../menu.js';
import type { SkillCache } from './cache.js';
import type { FetchedEntry } from './git-source.js';
import { type HttpAnswer, HttpRequestError, headerOf, httpRequest } from './http-request.js';
import { hubRouteUrl } from './hub-url.js';
import { overCapFromOffer } from './over-cap.js';
import { ResolveError } from './resolve-error.js';
import type { ClientSettings } from './settings.js';

/** Largest archive accepted from the hub, compressed and unpacked (defends against decompression bombs). */
export const MAX_ARCHIVE_BYTES = 64 * 1024 * 1024;
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

/**
 * A `gh:` repository the hub has not indexed yet answers 404 with Retry-After while it is being indexed
 * (SPEC 2.6): the client waits and asks again, each wait capped, for at most this long in all.
 */
export const INDEXING_WAIT_MS = 60_000;
const MAX_RETRY_AFTER_MS = 10_000;

/** What a conditional request to the hub answered; `flags` are the skill's safety flag codes it named. */
export type HubRefresh =
  | { status: 'unchanged'; flags?: string[] }
  | { status: 'fetched'; entry: FetchedEntry };

/** One answer of a batch probe: the cached revision holds (with the flags the hub named, if it did), or not. */
export type BatchAnswer = { status: 'unchanged' | 'changed'; flags?: string[] } | { status: 'other' };

/**
 * The safety flag codes of an answer: the X-Skill-Flags header when present (the hub sends it on 200, 304 and
 * HEAD, only when the skill has flags that hold), else the body's flags that no accepted dispute suppressed.
 */
export function flagCodes(header: string | undefined, bodyFlags?: readonly unknown[]): string[] {
  if (header !== undefined)
    return header
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f !== '');
  // A batch answer names bare codes, a skill answer flag objects (with `suppressed`).
  const flags = (bodyFlags ?? []).flatMap((flag) => {
    if (typeof flag === 'string') return [{ code: flag }];
    const { code, suppressed } = (flag ?? {}) as { code?: unknown; suppressed?: unknown };
    return typeof code === 'string' ? [{ code, suppressed: suppressed === true }] : [];
  });
  return activeFlagCodes(flags).sort();
}

/**
 * `hub:` (and `gh:` through the hub's mirror) over HTTPS (SPEC 2.2): `GET /v1/skills/<identity>` with
 * If-None-Match is both the revision probe and the metadata fetch; a skill's files come from
 * `/v1/archive/<identity>?rev=<revision>`, verified against Content-Digest and the per-file sha256.
 * Requests go through node:http (http-request.ts), not fetch, whose WebAssembly parser delays the exit.
 * tar and the zod schemas are imported only when an answer has a body to check: the common use, a 304
 * probe, then costs no parsing of either (the client's start-up, `npm run bench -- client`).
 */
export class HubSource {
  constructor(
    private readonly settings: Readonly<ClientSettings>,
    private readonly cache: SkillCache,
  ) {}

  /** `{hub}/v1/<kind>/<identity>` with each path segment escaped. */
  url(kind: 'skills' | 'archive', id: Identity, revision?: string): string {
    const encodedPath = id.path.split('/').map(encodeURIComponent).join('/');
    const query = revision ? `?rev=${encodeURIComponent(revision)}` : '';
    return hubRouteUrl(this.settings.hubUrl, `/v1/${kind}/${id.source}:${encodedPath}${query}`);
  }

  /** One conditional request; 304 means the cached revision `knownEtag` is still current. */
  async refresh(id: Identity, knownEtag?: string): Promise<HubRefresh> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (knownEtag) headers['if-none-match'] = knownEtag;
    const response = await this.request(id, this.url('skills', id), headers, this.settings.probeTimeoutMs);
    if (response.status === 304)
      return { status: 'unchanged', flags: flagCodes(headerOf(response, 'x-skill-flags')) };
    const result = await this.parseResult(id, response);
    const etag = headerOf(response, 'etag') ?? `"${result.revision}"`;
    const entry = await this.toEntry(id, result, etag);
    if (result.kind === 'skill') entry.flags = flagCodes(headerOf(response, 'x-skill-flags'), result.flags);
    return { status: 'fetched', entry };
  }

  /**
   * One `POST /v1/resolve` for many identities with the revisions the cache holds (SPEC 2.2): which cached
   * revisions still hold, in one round trip. Throws a ResolveError when the hub cannot be asked.
   */
  async probeBatch(
    items: { id: Identity; revision?: string }[],
    timeoutMs: number,
  ): Promise<Map<string, BatchAnswer>> {
    const answers = new Map<string, BatchAnswer>();
    const first = items[0];
    if (!first) return answers;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/json',
    };
    if (this.settings.hubToken) headers.authorization = `Bearer ${this.settings.hubToken}`;
    const body = JSON.stringify({
      items: items.map((i) => ({ identity: i.id.identity, ...(i.revision ? { revision: i.revision } : {}) })),
    });
    let response: HttpAnswer;
    try {
      response = await httpRequest(hubRouteUrl(this.settings.hubUrl, '/v1/resolve'), {
        method: 'POST',
        headers,
        body: Buffer.from(body),
        timeoutMs,
      });
    } catch (error) {
      if (!(error instanceof HttpRequestError)) throw error;
      throw new ResolveError(
        'offline',
        `the hub at ${this.settings.hubUrl} cannot be reached (${error.message}).`,
      );
    }
    if (!response.ok) throw await problemError(first.id, response);
    let raw: { items?: unknown };
    try {
      raw = JSON.parse(response.body.toString('utf8')) as { items?: unknown };
    } catch {
      throw new ResolveError('network', 'the hub answered the batch with something that is not JSON.');
    }
    const { ResolveResponse } = await import('../http.js');
    const parsed = ResolveResponse.safeParse(raw);
    if (!parsed.success)
      throw new ResolveError('network', "the hub's batch answer does not match the protocol.");
    parsed.data.items.forEach((item, index) => {
      const asked = items[index];
      if (!asked) return;
      if (item.status !== 'unchanged' && item.status !== 'changed') {
        answers.set(asked.id.identity, { status: 'other' });
        return;
      }
      // The batch's skill items carry their active flag codes (an older hub, or a menu, leaves them out).
      answers.set(
        asked.id.identity,
        item.flags
          ? { status: item.status, flags: flagCodes(undefined, item.flags) }
          : { status: item.status },
      );
    });
    return answers;
  }

  /**
   * The safety flag codes the hub names now for the skill exactly at `revision` (`HEAD ?rev=`: a verdict is
   * keyed by content, so it reaches old revisions too, SPEC 2.8); undefined when the hub does not know that
   * revision (or its answer is unreadable). Throws a ResolveError `offline` when the hub cannot be reached or
   * gives no answer within `timeoutMs`, so that a caller stops asking it.
   */
  async flagsAtRevision(id: Identity, revision: string, timeoutMs: number): Promise<string[] | undefined> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.settings.hubToken) headers.authorization = `Bearer ${this.settings.hubToken}`;
    try {
      const answer = await httpRequest(this.url('skills', id, revision), {
        method: 'HEAD',
        headers,
        timeoutMs,
      });
      return answer.ok ? flagCodes(headerOf(answer, 'x-skill-flags')) : undefined;
    } catch (error) {
      if (!(error instanceof HttpRequestError)) throw error;
      if (error.code !== 'unreachable') return undefined;
      throw new ResolveError(
        'offline',
        `the hub at ${this.settings.hubUrl} cannot be reached (${error.message}).`,
      );
    }
  }

  /** The skill exactly at `revision` (for a re-save's comparison); returns its cache content folder. */
  async fetchRevision(id: Identity, revision: string): Promise<string> {
    const response = await this.request(
      id,
      this.url('skills', id, revision),
      { accept: 'application/json' },
      this.settings.fetchTimeoutMs,
    );
    const result = await this.parseResult(id, response);
    if (result.kind !== 'skill') throw new ResolveError('usage', `${id.identity} is a menu, not a skill.`);
    await this.ensureContent(id, result);
    return this.cache.contentDir(id.identity, contentKeyOf(result.revision));
  }

  private async toEntry(id: Identity, result: ResolveResult, etag: string): Promise<FetchedEntry> {
    const base: FetchedEntry = {
      version: 1,
      identity: id.identity,
      source: id.source === 'gh' ? 'gh' : 'hub',
      kind: result.kind,
      revision: result.revision,
      fetchedAt: new Date().toISOString(),
      etag,
    };
    if (result.kind === 'menu') return { ...base, items: menuItems(result) };
    await this.ensureContent(id, result);
    const hubWarnings = result.warnings.filter((code) => HUB_STATE_WARNINGS.has(code));
    return {
      ...base,
      contentKey: contentKeyOf(result.revision),
      name: result.name,
      description: result.description,
      ...(hubWarnings.length > 0 ? { hubWarnings } : {}),
    };
  }

  /** Downloads, verifies and unpacks the archive unless that revision is already cached. */
  private async ensureContent(id: Identity, skill: SkillResponse): Promise<void> {
    const key = contentKeyOf(skill.revision);
    if (await this.cache.hasContent(id.identity, key)) return;
    const response = await this.request(
      id,
      this.url('archive', id, skill.revision),
      { accept: 'application/gzip' },
      this.settings.fetchTimeoutMs,
      MAX_ARCHIVE_BYTES,
    );
    if (!response.ok) throw await problemError(id, response);
    const body = response.body;
    verifyDigest(id, headerOf(response, 'content-digest'), body);
    const work = await this.cache.makeTemp();
    try {
      const unpacked = path.join(work, 'content');
      await mkdir(unpacked);
      await unpackSafely(id, body, unpacked);
      const root = await archiveRoot(unpacked, skill);
      await verifyFiles(id, root, skill);
      // The files were just checked against the answer's sha256s: the cache records those, not a second hash.
      await this.cache.commitContent(id.identity, key, root, skill.files);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  private async parseResult(id: Identity, response: HttpAnswer): Promise<ResolveResult> {
    if (!response.ok) throw await problemError(id, response);
    let json: unknown;
    try {
      json = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new ResolveError('network', `${id.identity}: the hub answered with something that is not JSON.`);
    }
    const { ResolveResult } = await import('../http.js');
    const parsed = ResolveResult.safeParse(json);
    if (!parsed.success) {
      throw new ResolveError(
        'network',
        `${id.identity}: the hub's answer does not match the protocol (${parsed.error.issues[0]?.message}).`,
      );
    }
    return parsed.data;
  }

  /** One GET to the hub; failures to get an answer become ResolveErrors (`offline` when unreachable). */
  private async request(
    id: Identity,
    url: string,
    headers: Record<string, string>,
    timeoutMs: number,
    maxBodyBytes?: number,
  ): Promise<HttpAnswer> {
    if (this.settings.hubToken) headers.authorization = `Bearer ${this.settings.hubToken}`;
    const deadline = Date.now() + INDEXING_WAIT_MS;
    try {
      for (;;) {
        const answer = await httpRequest(url, {
          headers,
          timeoutMs,
          ...(maxBodyBytes ? { maxBodyBytes } : {}),
        });
        const retryAfter = answer.status === 404 ? Number(headerOf(answer, 'retry-after')) : Number.NaN;
        if (!(retryAfter >= 0)) return answer;
        const waitMs = Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS);
        if (Date.now() + waitMs > deadline) return answer;
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    } catch (error) {
      if (!(error instanceof HttpRequestError)) throw error;
      if (error.code === 'too-large')
        throw badArchive(id, `the archive is larger than ${maxBodyBytes} bytes`);
      if (error.code === 'bad-answer')
        throw new ResolveError(
          'network',
          `${id.identity}: the hub's answer was unreadable: ${error.message}.`,
        );
      throw new ResolveError(
        'offline',
        `${id.identity}: the hub at ${this.settings.hubUrl} cannot be reached (${error.message}).`,
      );
    }
  }
}

/** Content folders of hub skills are keyed by revision (revisions are immutable on the hub). */
function contentKeyOf(revision: string): string {
  return `rev-${createHash('sha256').update(revision).digest('hex').slice(0, 32)}`;
}

/** The warnings of a skill's answer about the hub's copy itself (the others are the SKILL.md's conventions). */
const HUB_STATE_WARNINGS = new Set(['files-left-out', 'link-stale']);

function menuItems(menu: MenuResponse): MenuItem[] {
  // A row keeps its skill's verdict, so the client marks a flagged row and refuses a malicious one (SPEC 2.8).
  return menu.items.map((i) => ({
    identity: i.identity,
    name: i.name,
    description: i.description,
    ...(i.flags?.length ? { flags: i.flags } : {}),
    ...(i.refused ? { refused: true as const } : {}),
  }));
}

/** Maps a hub error answer (problem+json) to the protocol's failure codes. */
export async function problemError(id: Identity, response: HttpAnswer): Promise<ResolveError> {
  const { ProblemDetails } = await import('../http.js');
  let problem: ProblemDetails | undefined;
  try {
    const parsed = ProblemDetails.safeParse(JSON.parse(response.body.toString('utf8')));
    if (parsed.success) problem = parsed.data;
  } catch {
    problem = undefined;
  }
  const said = problem?.detail ?? problem?.title;
  const tail = said ? `: ${said}` : '';
  switch (response.status) {
    case 404:
      return new ResolveError(
        'not-found',
        `${id.identity} does not exist on the hub (or is private and your token cannot see it)${tail}.`,
      );
    case 410: {
      const details: Record<string, unknown> = {};
      if (problem?.lastRevision) details.lastRevision = problem.lastRevision;
      if (problem?.lastSeen) details.lastSeen = problem.lastSeen;
      const seen = problem?.lastSeen ? ` (last seen ${problem.lastSeen})` : '';
      return new ResolveError('gone', `${id.identity} is gone upstream${seen}.`, details);
    }
    case 401:
    case 403:
      return new ResolveError(
        'no-access',
        `${id.identity}: the hub refused access; run \`atskills login\` with a token that may read it${tail}.`,
      );
    case 422:
      if (problem?.code === 'over-cap') {
        const subs = Array.isArray(problem.subcollections)
          ? (problem.subcollections as Record<string, unknown>[])
          : [];
        const prefix = id.identity.slice(0, id.identity.length - id.path.length);
        const subcollections = subs.map((s) => ({
          identity: typeof s.identity === 'string' ? s.identity : `${prefix}${String(s.path)}`,
          count: Number(s.skills ?? s.count ?? 0),
        }));
        return overCapFromOffer(id.identity, Number(problem.count ?? 0), subcollections);
      }
      return new ResolveError('usage', `${id.identity}: the hub refused the request${tail}.`);
    default:
      if (response.status >= 400 && response.status < 500) {
        return new ResolveError(
          'usage',
          `${id.identity}: the hub refused the request (${response.status})${tail}.`,
        );
      }
      return new ResolveError('network', `${id.identity}: the hub failed (${response.status})${tail}.`);
  }
}

function badArchive(id: Identity, why: string): ResolveError {
  return new ResolveError('bad-archive', `${id.identity}: the hub's archive was refused: ${why}.`);
}

/** RFC 9530 `Content-Digest: sha-256=:<base64>:` over the bytes as sent. */
function verifyDigest(id: Identity, header: string | undefined, body: Buffer): void {
  const match = header ? /sha-256=:([A-Za-z0-9+/=]+):/.exec(header) : null;
  if (!match) throw badArchive(id, 'it carries no Content-Digest sha-256');
  const actual = createHash('sha256').update(body).digest('base64');
  if (actual !== match[1]) throw badArchive(id, 'its Content-Digest does not match its bytes');
}

/** Unpacks regular files and folders only; links, devices and paths leaving the folder fail the archive. */
async function unpackSafely(id: Identity, body: Buffer, cwd: string): Promise<void> {
  const { Unpack } = await import('tar');
  let refused: string | undefined;
  let unpackedBytes = 0;
  await new Promise<void>((resolve, reject) => {
    const unpack = new Unpack({
      cwd,
      strict: true,
      preserveOwner: false,
      filter: (entryPath: string, entry: unknown) => {
        const e = entry as ReadEntry;
        const segments = entryPath.split(/[\\/]/);
        if (e.type !== 'File' && e.type !== 'Directory' && e.type !== 'OldFile')
          refused ??= `"${entryPath}" is a ${e.type}`;
        else if (path.isAbsolute(entryPath) || segments.includes('..'))
          refused ??= `"${entryPath}" points outside the skill`;
        unpackedBytes += e.size ?? 0;
        if (unpackedBytes > MAX_UNPACKED_BYTES)
          refused ??= `it unpacks to more than ${MAX_UNPACKED_BYTES} bytes`;
        return refused === undefined;
      },
    });
    unpack.on('error', reject);
    unpack.on('close', () => resolve());
    unpack.end(body);
  }).catch((error: unknown) => {
    throw badArchive(id, `it is not a readable gzip tar (${(error as Error).message})`);
  });
  if (refused) throw badArchive(id, refused);
}

/** Archives hold the skill folder's files at their top level; tolerate a single wrapping folder too. */
async function archiveRoot(unpacked: string, skill: SkillResponse): Promise<string> {
  const first = skill.files[0]?.path;
  if (!first) return unpacked;
  try {
    await readFile(path.join(unpacked, first));
    return unpacked;
  } catch {
    const top = await readdir(unpacked);
    return top.length === 1 ? path.join(unpacked, top[0]!) : unpacked;
  }
}

/** Every file the hub listed must be in the archive with the listed sha256. */
async function verifyFiles(id: Identity, root: string, skill: SkillResponse): Promise<void> {
  for (const file of skill.files) {
    let bytes: Buffer;
    try {
      bytes = await readFile(path.join(root, file.path));
    } catch {
      throw badArchive(id, `"${file.path}" is listed but missing`);
    }
    if (createHash('sha256').update(bytes).digest('hex') !== file.sha256)
      throw badArchive(id, `"${file.path}" does not match its sha256`);
  }
}
