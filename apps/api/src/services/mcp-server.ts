import type { Database, ReadScope } from '@atskills/db';
import { formatReference } from '@atskills/protocol';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isHttpProblem, problem } from '../problems.js';
import type { SearchEngine } from '../search/engine.js';
import type { SuggestEngine } from '../suggest/engine.js';
import { readSkillFile } from './archive.js';
import { resolveBatch } from './batch-resolve.js';
import { registerSuggestTool } from './mcp-suggest.js';
import { resolveIdentity } from './resolve.js';
import { searchPageResponse, searchSkills } from './search.js';
import { getSkillView } from './skill-view.js';

/** What the MCP tools read through: the same services, with the caller's scope, as the REST routes. */
export interface McpDeps {
  db: Database;
  searchEngine: SearchEngine;
  /** Suggestions (the suggest_skills tool); absent, the tool is not offered. */
  suggestEngine?: SuggestEngine;
  /** The caller (from the request's bearer token, exactly as on REST). */
  viewer: ReadScope;
  version: string;
  /** Counts a resolution of a skill (services/uses.ts). */
  noteUse?: (identity: string) => void;
}

const Identity = z
  .string()
  .min(1)
  .max(2048)
  .describe(
    'An identity with its prefix (gh:owner/repo/path, hub:namespace/collection/path) or a @skills: reference',
  );
const Revision = z.string().min(1).max(128).optional().describe('Pin an exact revision (as ?rev= on REST)');

/** `@skills:hub:x/y` and `hub:x/y` both name the identity; suffixes are not part of it. */
function bareIdentity(text: string): string {
  return text
    .trim()
    .replace(/^@skills:/, '')
    .replace(/(?::(?:save|install)){1,2}$/, '');
}

/**
 * A hub problem as a tool error: the same status, code and extensions (count, subcollections, lastSeen, ...)
 * that the REST route answers with, as JSON text and structured content.
 */
function problemResult(error: unknown): CallToolResult {
  if (!isHttpProblem(error)) throw error;
  const problem = {
    status: error.status,
    code: error.code,
    ...(error.detail ? { detail: error.detail } : {}),
    ...error.extensions,
  };
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(problem) }],
    structuredContent: problem,
  };
}

async function answer(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    return problemResult(error);
  }
}

/**
 * Builds the hub's MCP server for one caller: tools to search, resolve one identity, read one bundled
 * file and resolve a batch. Built per request (stateless Streamable HTTP), so every call reads with that
 * request's viewer: private skills stay invisible without a token that may read them.
 */
export function buildMcpServer(deps: McpDeps): McpServer {
  const { db, searchEngine, viewer } = deps;
  const noteUse = deps.noteUse ?? (() => {});
  const server = new McpServer({ name: 'atskills-hub', version: deps.version });
  registerSuggestTool(server, deps);

  server.registerTool(
    'search_skills',
    {
      title: 'Search skills',
      description:
        "Full-text search over the hub's skills. Each result is a paste-ready @skills: reference with its name, description and description token cost (what installing it costs every session).",
      inputSchema: {
        query: z
          .string()
          .trim()
          .min(1)
          .max(256)
          .describe('A skill name, keywords or the task in your own words'),
        limit: z.number().int().min(1).max(100).default(10),
        cursor: z.string().max(1024).optional().describe('nextCursor of the previous page'),
        source: z.enum(['gh', 'hub']).optional(),
        owner: z.string().max(100).optional(),
        repo: z.string().max(100).optional(),
        namespace: z.string().max(100).optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answer(async () => {
        const outcome = await searchSkills(searchEngine, viewer, {
          q: args.query,
          limit: args.limit,
          cursor: args.cursor,
          filters: {
            ...(args.source ? { source: args.source } : {}),
            ...(args.owner ? { owner: args.owner } : {}),
            ...(args.repo ? { repo: args.repo } : {}),
            ...(args.namespace ? { namespace: args.namespace } : {}),
          },
        });
        const page = searchPageResponse(outcome);
        const results = page.results.map((r) => ({
          reference: r.reference,
          identity: r.identity,
          kind: r.kind,
          name: r.name,
          description: r.description,
          descriptionTokens: r.descriptionTokens,
          ...(r.flags.length ? { flags: r.flags.map((f) => f.code) } : {}),
        }));
        const lines = results.map(
          (r) =>
            `${r.reference} (${r.name}, ${r.descriptionTokens} tokens): ${r.description.replace(/\s+/g, ' ')}`,
        );
        return {
          content: [{ type: 'text', text: lines.length ? lines.join('\n') : 'No skill matches.' }],
          structuredContent: { results, nextCursor: page.nextCursor },
        };
      }),
  );

  server.registerTool(
    'resolve_skill',
    {
      title: 'Resolve a skill or folder',
      description:
        'Resolves an identity. A skill answers its frontmatter, SKILL.md body and file list (read others with read_skill_file); a folder answers its menu (one identity per skill). A folder of more than 128 skills is refused (code over-cap) with sub-collections to take instead.',
      inputSchema: { identity: Identity, revision: Revision },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answer(async () => {
        const result = await getSkillView(db, viewer, bareIdentity(args.identity), args.revision);
        if (result.kind === 'menu') {
          const { view } = result;
          return {
            content: [
              {
                type: 'text',
                text: `<skills-menu identity="${view.identity}" revision="${view.revision}" count="${view.items.length}">\nReference one of these with @skills:<identity> to load it.\n${result.text}\n</skills-menu>`,
              },
            ],
            structuredContent: { ...view },
          };
        }
        const { view } = result;
        noteUse(view.identity);
        const files = view.files.map((f) => f.path).join(', ');
        return {
          content: [
            {
              type: 'text',
              text: `<skill identity="${view.identity}" name="${view.name}" revision="${view.revision}"${files ? ` files="${files}"` : ''}>\n${view.body}\n</skill>`,
            },
          ],
          structuredContent: {
            kind: 'skill',
            identity: view.identity,
            reference: formatReference({ identity: view.identity }),
            revision: view.revision,
            name: view.name,
            description: view.description,
            frontmatter: view.frontmatter,
            body: view.body,
            files: view.files,
            flags: view.flags,
          },
        };
      }),
  );

  server.registerTool(
    'read_skill_file',
    {
      title: 'Read one file of a skill',
      description:
        "One of a skill's bundled files (a path from resolve_skill's file list), as text (base64 when binary).",
      inputSchema: {
        identity: Identity,
        path: z.string().min(1).max(1024).describe('File path within the skill folder, e.g. scripts/run.sh'),
        revision: Revision,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answer(async () => {
        const resolved = await resolveIdentity(db, viewer, bareIdentity(args.identity), args.revision);
        if (resolved.kind !== 'skill') {
          throw problem('not-a-skill', `${resolved.identity} is a menu; files belong to skills`);
        }
        const file = await readSkillFile(db, resolved, args.path);
        noteUse(resolved.identity);
        const text = decodeText(file.content);
        const meta = {
          identity: resolved.identity,
          revision: resolved.revision,
          path: file.path,
          size: file.size,
          sha256: file.sha256,
        };
        return text === undefined
          ? {
              content: [{ type: 'text', text: file.content.toString('base64') }],
              structuredContent: { ...meta, encoding: 'base64' },
            }
          : { content: [{ type: 'text', text }], structuredContent: { ...meta, encoding: 'utf-8' } };
      }),
  );

  server.registerTool(
    'resolve_batch',
    {
      title: 'Resolve many identities at once',
      description:
        'Up to 128 identities, each with the revision you hold: answers what changed (revision, name, description, frontmatter) and what did not, in one call (a whole .autotrigger at session start).',
      inputSchema: {
        items: z
          .array(z.object({ identity: Identity, revision: Revision }))
          .min(1)
          .max(128),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      answer(async () => {
        const response = await resolveBatch(db, viewer, {
          items: args.items.map((i) => ({
            identity: bareIdentity(i.identity),
            ...(i.revision ? { revision: i.revision } : {}),
          })),
        });
        for (const i of response.items) {
          if (i.status === 'changed' || i.status === 'unchanged') noteUse(i.identity);
        }
        const lines = response.items.map((i) =>
          i.status === 'changed' && i.kind === 'skill'
            ? `- ${i.name}: ${(i.description ?? '').replace(/\s+/g, ' ')} (${i.identity}) [changed ${i.revision}]`
            : `- ${i.identity}: ${i.status}${'revision' in i && i.revision ? ` ${i.revision}` : ''}`,
        );
        return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { ...response } };
      }),
  );

  return server;
}

function decodeText(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
