// GET /llms.txt (the llmstxt.org convention): where an agent that lands on this hub should start.

/** The file with this hub's public URL filled in. */
export function renderLlmsTxt(hubUrl: string): string {
  return `# @skills hub

> Agent skills (folders with a SKILL.md) that an agent loads at the point of use with \`@skills:<identity>\`,
> vendors into a project with \`:save\`, and keeps resident with \`:install\`.

## For agents

- [SKILLS.md](${hubUrl}/SKILLS.md): follow it to resolve, save, install and search skills with a shell and curl
- [MCP server](${hubUrl}/mcp): Streamable HTTP; tools to search, resolve, read files and resolve in batches
- [Search](${hubUrl}/search?q=terraform): \`GET /search?q=<words>\`, JSON results with paste-ready references
- [OpenAPI](${hubUrl}/openapi.json): every route, with problem codes

## Client

- [atskills](${hubUrl}/cli/atskills.tgz): \`npm install -g ${hubUrl}/cli/atskills.tgz\` (Node 20), then \`atskills init\`
`;
}
