import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { renderSkillsMd } from './skills-md.js';

describe('/SKILLS.md', () => {
  it("tells shell agents to clone gh: folders from this hub's git base, not github.com whatever it is", () => {
    const config = loadConfig({ GIT_BASE_URL: 'https://ghe.example.com/' });
    const text = renderSkillsMd('https://hub.example.com', config.github.gitBaseUrl);
    expect(text).toContain('--sparse https://ghe.example.com/<owner>/<repo> <tmp>');
    expect(text).not.toContain('--sparse https://github.com/');
    expect(loadConfig({}).github.gitBaseUrl).toBe('https://github.com');
    expect(() => loadConfig({ GIT_BASE_URL: 'ftp://x' })).toThrow(/GIT_BASE_URL/);
  });
});
