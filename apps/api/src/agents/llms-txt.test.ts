import { describe, expect, it } from 'vitest';
import { renderLlmsTxt } from './llms-txt.js';

describe('renderLlmsTxt', () => {
  const text = renderLlmsTxt('https://hub.example');

  it('names every MCP tool, suggest_skills among them', () => {
    const mcp = text.slice(text.indexOf('[MCP server]'), text.indexOf('\n- [', text.indexOf('[MCP server]')));
    for (const tool of [
      'suggest_skills',
      'search_skills',
      'resolve_skill',
      'read_skill_file',
      'resolve_batch',
    ])
      expect(mcp).toContain(`\`${tool}\``);
  });

  it('points at /v1/suggest, GET and POST', () => {
    expect(text).toContain('(https://hub.example/v1/suggest?q=');
    expect(text).toContain('`GET /v1/suggest?q=<message>`');
    expect(text).toContain('`POST /v1/suggest`');
  });
});
