// GET /llms.txt (the llmstxt.org convention): where an agent that lands on this hub should start.

/** The file with this hub's public URL filled in. */
export function renderLlmsTxt(hubUrl: string): string {
  return `# @skills hub

> Agent skills (folders with a SKILL.md) that an agent loads at the point of use with \`@skills:<identity>\`,
> vendors into a project with \`:save\`, and keeps resident with \`:install\`.

## For agents

- [SKILLS.md](${hubUrl}/SKILLS.md): follow it to resolve, save, install and search skills with a shell and curl
- [MCP server](${hubUrl}/mcp): Streamable HTTP; tools to suggest skills for a task (\`suggest_skills\`), search
  (\`search_skills\`), resolve (\`resolve_skill\`), read files (\`read_skill_file\`) and resolve in batches
  (\`resolve_batch\`), its \`instructions\` on when to use them, and the MCP skills extension (\`skills/list\`,
  \`skills/get\`, \`resources/read\` on \`skill://hub/...\` and \`skill://gh/...\` URIs, each file with its sha256
  digest)
- [Suggest](${hubUrl}/v1/suggest?q=extract%20the%20tables%20of%20a%20pdf): \`GET /v1/suggest?q=<message>\` (or
  \`POST /v1/suggest\` \`{"message": ...}\` up to 8,000 characters): the skills likely to help with a task, each with
  the chance that it helps; \`abstained: true\` when none fits
- [Search](${hubUrl}/search?q=terraform): \`GET /search?q=<words>\`, JSON results with paste-ready references
- [API](${hubUrl}/openapi.json): the OpenAPI document of every route, with problem codes
  (\`GET /v1/skills/<identity>\`, \`POST /v1/resolve\`, \`GET /v1/archive/<identity>\`)
- [Skills discovery index](${hubUrl}/.well-known/agent-skills/index.json): public hub skills for the \`skills\` CLI,
  \`npx skills add ${hubUrl}\`

## Client

- [atskills](${hubUrl}/cli/atskills.tgz): \`npm install -g ${hubUrl}/cli/atskills.tgz\` (Node 20), then \`atskills init\`
`;
}
