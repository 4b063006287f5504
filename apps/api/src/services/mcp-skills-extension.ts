// The MCP skills extension (`io.modelcontextprotocol/skills`, SEP-2640; modelcontextprotocol/ext-skills,
// specification/stable/skills.mdx) beside the hub's tools (SPEC 2.5): skills/list pages through the hub:
// skills the caller may read, skills/get answers for any readable skill (gh: included), and every file of a
// skill is a resource read with resources/read. Entries carry the frontmatter and each file's sha256 digest
// and size, the hub's own file list for that revision. Unknown, unreadable or unservable URIs are -32602.
import { createHash } from 'node:crypto';
import {
  type Database,
  existingBlobHashes,
  type HubSkillEntry,
  listHubSkillEntries,
  type ReadScope,
} from '@atskills/db';
import { formatIdentity, refusingVerdict, SKILL_FILE } from '@atskills/protocol';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isHttpProblem } from '../problems.js';
import { readSkillFile } from './archive.js';
import { flagRules } from './flags.js';
import { type ResolvedSkill, resolveIdentity } from './resolve.js';
import { servableFiles } from './skill-view.js';

/** The extension's identifier, declared under `capabilities.extensions`. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** Entries per skills/list (and resources/list) page. */
export const SKILLS_PAGE = 50;
/** How long a host may treat a listing or an entry as current (SEP-2549 `ttlMs`). */
const TTL_MS = 60_000;
// Deeper URIs than this cannot name a stored skill file; refusing them bounds the lookups one read costs.
const MAX_SEGMENTS = 64;

const SCHEME = 'skill://';

/** A file of a skill in an entry's manifest. */
interface SkillResource {
  uri: string;
  digest: string;
  size: number;
}

/** One skill entry of skills/list and skills/get. */
interface SkillEntry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: SkillResource[];
}

// The request schemas take any params: the SDK answers a request its schema refuses with -32603 and the
// whole zod report, so each handler checks its params itself (checkedParams) and answers -32602.
const anyParams = z.unknown().optional();
const ListParams = z.object({ cursor: z.string().optional() }).passthrough().optional();
const UriParams = z.object({ uri: z.string() }).passthrough();

/** `skill://<source>/<segments...>` of an identity's folder, each segment percent-encoded. */
export function skillFolderUri(identity: string): string {
  const colon = identity.indexOf(':');
  const source = identity.slice(0, colon);
  const segments = identity.slice(colon + 1).split('/');
  return `${SCHEME}${source}/${segments.map(encodeURIComponent).join('/')}`;
}

function fileUri(folderUri: string, path: string): string {
  return `${folderUri}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The last segment of the skill folder (a collection's or repository's root skill: its container). */
function folderName(identity: string): string {
  return identity.slice(identity.lastIndexOf('/') + 1);
}

/** The decoded segments of a skill:// URI after the scheme, or undefined when it is not one of ours. */
function uriSegments(uri: string): { source: 'gh' | 'hub'; segments: string[] } | undefined {
  if (!uri.startsWith(SCHEME)) return undefined;
  const raw = uri.slice(SCHEME.length).split('/');
  if (raw.length > MAX_SEGMENTS) return undefined;
  const [source, ...rest] = raw;
  if (source !== 'gh' && source !== 'hub') return undefined;
  try {
    const segments = rest.map((s) => decodeURIComponent(s));
    // An encoded "/" or an empty segment would name a path no skill file has.
    if (segments.some((s) => s === '' || s.includes('/'))) return undefined;
    return { source, segments };
  } catch {
    return undefined;
  }
}

const invalid = (message: string) => new McpError(ErrorCode.InvalidParams, message);

/**
 * The -32602 message for params of `method` that a schema refused: its first problem on one line (never the
 * schema library's whole report), e.g. `tools/call: params.name: Invalid input: expected string, received number`.
 */
export function invalidParamsMessage(method: string, error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? `params.${issue.path.join('.')}` : 'params';
  return `${method}: ${where}: ${issue?.message ?? 'invalid'}`;
}

/** A request's params checked against `schema`, or an invalid-params error naming the first problem. */
function checkedParams<T extends z.ZodType>(method: string, schema: T, params: unknown): z.infer<T> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw invalid(invalidParamsMessage(method, parsed.error));
}

/**
 * Registers the extension on `server` (whose capabilities declare it and `resources`), reading with `viewer`
 * exactly as the tools do.
 */
export function registerSkillsExtension(server: McpServer, db: Database, viewer: ReadScope): void {
  const cacheScope = viewer.isAdmin || viewer.readableNamespaces.length > 0 ? 'private' : 'public';

  /** A readable, servable skill at `identity`, or undefined (menus, unknown, private, malicious, misnamed). */
  async function skillAt(identity: string): Promise<ResolvedSkill | undefined> {
    let resolved: Awaited<ReturnType<typeof resolveIdentity>>;
    try {
      resolved = await resolveIdentity(db, viewer, identity);
    } catch (error) {
      if (isHttpProblem(error)) return undefined;
      throw error;
    }
    if (resolved.kind !== 'skill') return undefined;
    if (resolved.name !== folderName(resolved.identity)) return undefined;
    if (refusingVerdict(flagRules(resolved.flags))) return undefined;
    return resolved;
  }

  function entryOf(
    skill: Pick<HubSkillEntry, 'identity' | 'frontmatter'>,
    files: { path: string; size: number; sha256: string }[],
  ): SkillEntry {
    const folder = skillFolderUri(skill.identity);
    return {
      uri: `${folder}/${SKILL_FILE}`,
      frontmatter: skill.frontmatter,
      resources: files.map((f) => ({
        uri: fileUri(folder, f.path),
        digest: `sha256:${f.sha256}`,
        size: f.size,
      })),
    };
  }

  /** One page of listable hub: skills: entries and the cursor of the next page. */
  async function page(cursor: string | undefined): Promise<{ entries: SkillEntry[]; nextCursor?: string }> {
    let after: string | undefined;
    if (cursor !== undefined) {
      after = Buffer.from(cursor, 'base64url').toString('utf8');
      if (!after.startsWith('hub:'))
        throw invalid('Unknown cursor: pass the nextCursor of the previous page');
    }
    const rows = await listHubSkillEntries(db, viewer, { limit: SKILLS_PAGE, ...(after ? { after } : {}) });
    const listable = rows.filter(
      (row) =>
        row.name === folderName(row.identity) &&
        !refusingVerdict(flagRules(row.flags)) &&
        row.files.some((f) => f.path === SKILL_FILE && !f.skipped),
    );
    const stored = await existingBlobHashes(
      db,
      listable.flatMap((row) => row.files.filter((f) => !f.skipped).map((f) => f.sha256)),
    );
    const entries = listable.map((row) =>
      entryOf(
        row,
        row.files
          .filter((f) => !f.skipped && stored.has(f.sha256))
          .map(({ path, size, sha256 }) => ({ path, size, sha256 })),
      ),
    );
    const last = rows[rows.length - 1];
    return {
      entries,
      ...(rows.length === SKILLS_PAGE && last
        ? { nextCursor: Buffer.from(last.identity, 'utf8').toString('base64url') }
        : {}),
    };
  }

  server.server.setRequestHandler(
    z.object({ method: z.literal('skills/list'), params: anyParams }),
    async (request) => {
      const params = checkedParams('skills/list', ListParams, request.params);
      const { entries, nextCursor } = await page(params?.cursor);
      return {
        resultType: 'complete',
        skills: entries,
        ...(nextCursor ? { nextCursor } : {}),
        ttlMs: TTL_MS,
        cacheScope,
      };
    },
  );

  server.server.setRequestHandler(
    z.object({ method: z.literal('skills/get'), params: anyParams }),
    async (request) => {
      const { uri } = checkedParams('skills/get', UriParams, request.params);
      const parsed = uriSegments(uri);
      if (!parsed || parsed.segments.at(-1) !== SKILL_FILE || parsed.segments.length < 3) {
        throw invalid(
          `Not a skill this server serves: ${uri} (expected skill://hub/... or skill://gh/... ending in /SKILL.md)`,
        );
      }
      const skill = await skillAt(formatIdentity(parsed.source, parsed.segments.slice(0, -1).join('/')));
      if (!skill) throw invalid(`Not a skill this server serves: ${uri}`);
      return {
        resultType: 'complete',
        skill: entryOf(skill, await servableFiles(db, skill)),
        ttlMs: TTL_MS,
        cacheScope,
      };
    },
  );

  // The hub: skills' SKILL.md files, page by page as skills/list (supporting files are read by URI).
  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/list'), params: anyParams }),
    async (request) => {
      const params = checkedParams('resources/list', ListParams, request.params);
      const { entries, nextCursor } = await page(params?.cursor);
      return {
        resources: entries.map((entry) => ({
          uri: entry.uri,
          name: String(entry.frontmatter.name),
          description: String(entry.frontmatter.description ?? ''),
          mimeType: 'text/markdown',
        })),
        ...(nextCursor ? { nextCursor } : {}),
      };
    },
  );

  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/templates/list'), params: z.unknown().optional() }),
    async () => ({
      resourceTemplates: [
        {
          uriTemplate: 'skill://hub/{namespace}/{collection}/{+path}',
          name: 'hub-skill-file',
          description: 'A file of a hub: skill; the skill itself is its SKILL.md',
        },
        {
          uriTemplate: 'skill://gh/{owner}/{repo}/{+path}',
          name: 'gh-skill-file',
          description:
            'A file of a gh: skill (a folder of a public GitHub repository); the skill itself is its SKILL.md',
        },
      ],
    }),
  );

  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/read'), params: anyParams }),
    async (request) => {
      const { uri } = checkedParams('resources/read', UriParams, request.params);
      const parsed = uriSegments(uri);
      if (!parsed || parsed.segments.length < 3) throw invalid(`Unknown resource: ${uri}`);
      // The skill is the longest folder prefix that is a skill holding the rest as one of its files.
      for (let cut = parsed.segments.length - 1; cut >= 2; cut--) {
        const skill = await skillAt(formatIdentity(parsed.source, parsed.segments.slice(0, cut).join('/')));
        if (!skill) continue;
        let file: Awaited<ReturnType<typeof readSkillFile>>;
        try {
          file = await readSkillFile(db, skill, parsed.segments.slice(cut).join('/'));
        } catch (error) {
          if (isHttpProblem(error)) break;
          throw error;
        }
        const text = decodeUtf8(file.content);
        const mimeType = file.path.endsWith('.md')
          ? 'text/markdown'
          : text === undefined
            ? 'application/octet-stream'
            : 'text/plain';
        // The bytes as stored: a host checks them against the entry's digest.
        if (createHash('sha256').update(file.content).digest('hex') !== file.sha256) break;
        return {
          contents: [
            text === undefined
              ? { uri, mimeType, blob: file.content.toString('base64') }
              : { uri, mimeType, text },
          ],
        };
      }
      throw invalid(`Unknown resource: ${uri}`);
    },
  );
}

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    // Only text that encodes back to the same bytes is sent as text, so its digest still holds.
    return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
  } catch {
    return undefined;
  }
}
