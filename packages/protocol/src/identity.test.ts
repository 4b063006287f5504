import { describe, expect, it } from 'vitest';
import { IdentityError } from './errors.js';
import {
  diskPath,
  ghParts,
  githubGitUrl,
  hubParts,
  isValidGithubOwner,
  isValidGithubRepo,
  isValidGithubRepositoryName,
  normalizeIdentity,
  parseGithubRepository,
  parseIdentity,
  splitIdentityPrefix,
} from './identity.js';

function codeOf(text: string): string | undefined {
  try {
    parseIdentity(text);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(IdentityError);
    return (error as IdentityError).code;
  }
}

describe('parseIdentity', () => {
  it('parses the three forms and computes where they live on disk', () => {
    expect(parseIdentity('deploy/runbook')).toEqual({
      source: 'local',
      path: 'deploy/runbook',
      identity: 'deploy/runbook',
    });
    const gh = parseIdentity('gh:Owner/Repo/sub/dir/');
    expect(gh).toEqual({ source: 'gh', path: 'Owner/Repo/sub/dir', identity: 'gh:Owner/Repo/sub/dir' });
    expect(diskPath(gh)).toBe('.atskills/gh/Owner/Repo/sub/dir');
    expect(ghParts(gh)).toEqual({ owner: 'Owner', repo: 'Repo', subpath: 'sub/dir' });
    const hub = parseIdentity('HUB:Acme/Deploy');
    expect(hub.identity).toBe('hub:acme/deploy');
    expect(diskPath(hub)).toBe('.atskills/hub/acme/deploy');
    expect(hubParts(hub)).toEqual({ namespace: 'acme', collection: 'deploy', subpath: '' });
    expect(diskPath(parseIdentity('deploy/runbook'))).toBe('.atskills/deploy/runbook');
  });

  it('normalizes GitHub URLs, dropping the ref, .git and query', () => {
    expect(normalizeIdentity('https://github.com/o/r.git')).toBe('gh:o/r');
    expect(normalizeIdentity('https://www.github.com/o/r/tree/v1.2/a/b?x=1#frag')).toBe('gh:o/r/a/b');
    expect(normalizeIdentity('https://github.com/o/r/blob/main/a/b/SKILL.md')).toBe('gh:o/r/a/b');
    expect(normalizeIdentity('https://github.com/o/r/tree/main/my%20skill')).toBe('gh:o/r/my skill');
    expect(codeOf('https://gitlab.com/o/r')).toBe('unknown-prefix');
    expect(codeOf('https://github.com/o/r/issues/1')).toBe('unknown-prefix');
    expect(codeOf('https://github.com/o/r/tree')).toBe('incomplete');
    expect(codeOf('https://github.com/o')).toBe('incomplete');
  });

  it('takes GitHub URLs pasted without the scheme or after a redundant gh:, checking the host exactly', () => {
    expect(normalizeIdentity('github.com/o/r/tree/main/a')).toBe('gh:o/r/a');
    expect(normalizeIdentity('WWW.GitHub.com/o/r')).toBe('gh:o/r');
    expect(normalizeIdentity('gh:https://github.com/o/r/blob/main/a/SKILL.md')).toBe('gh:o/r/a');
    expect(normalizeIdentity('gh:github.com/o/r')).toBe('gh:o/r');
    expect(codeOf('https://evil-github.com/o/r')).toBe('unknown-prefix');
    expect(codeOf('https://github.com.example.net/o/r')).toBe('unknown-prefix');
    expect(codeOf('gh:https://github.com.example.net/o/r')).toBe('unknown-prefix');
    // Without a scheme a look-alike host is just a project folder name, never GitHub.
    expect(parseIdentity('evil-github.com/o/r')).toMatchObject({ source: 'local' });
    expect(parseIdentity('github.com.example.net/o/r')).toMatchObject({ source: 'local' });
  });

  it('refuses encoded separators instead of making new segments', () => {
    for (const text of [
      'gh:o/r/a%2Fb/x',
      'gh:o/r/a%2fb',
      'hub:t/c/a%5Cb',
      'a/%5cb',
      'https://github.com/o/r/tree/main/a%2Fb',
    ])
      expect(codeOf(text)).toBe('encoded-separator');
  });

  it('keeps real-world folder names: dots, @scopes, Unicode, spaces and colons via escapes', () => {
    expect(normalizeIdentity('gh:o/r/.claude/skills/x')).toBe('gh:o/r/.claude/skills/x');
    expect(normalizeIdentity('gh:o/r/@scope/tool')).toBe('gh:o/r/@scope/tool');
    expect(normalizeIdentity('gh:o/r/技能')).toBe('gh:o/r/技能');
    expect(normalizeIdentity('gh:o/r/a%3Ab')).toBe('gh:o/r/a:b');
    // the canonical form is stable
    expect(normalizeIdentity('gh:o/r/a:b')).toBe('gh:o/r/a:b');
  });

  it('rejects each broken rule with its own code', () => {
    expect(codeOf('')).toBe('empty');
    expect(codeOf('ftp:o/r')).toBe('unknown-prefix');
    expect(codeOf('gh:o')).toBe('incomplete');
    expect(codeOf('gh:')).toBe('incomplete');
    expect(codeOf('hub:t')).toBe('incomplete');
    expect(codeOf('a//b')).toBe('empty-segment');
    expect(codeOf('a/./b')).toBe('dot-segment');
    expect(codeOf('a/%2E%2E/b')).toBe('dot-segment');
    expect(codeOf('/a')).toBe('absolute');
    expect(codeOf('a\\b')).toBe('backslash');
    expect(codeOf('a/%5Cb')).toBe('encoded-separator');
    expect(codeOf('a/b\u0007')).toBe('control-char');
    expect(codeOf('a/%00')).toBe('control-char');
    expect(codeOf(`a/${'x'.repeat(600)}`)).toBe('too-long');
    expect(codeOf('gh:-o/r')).toBe('bad-owner');
    expect(codeOf('gh:o/r!')).toBe('bad-repo');
    expect(codeOf('a/%zz')).toBe('bad-percent-encoding');
    expect(codeOf('a/100%25')).toBe('bad-percent-encoding');
    expect(codeOf('a%3Ab/c')).toBe('unknown-prefix');
  });

  it('carries a readable message', () => {
    expect(() => parseIdentity('gh:-o/r')).toThrow(/not a valid GitHub user or organization/);
  });
});

describe('GitHub name rules', () => {
  it('accepts what GitHub accepts and refuses the rest', () => {
    expect(isValidGithubOwner('anthropics')).toBe(true);
    expect(isValidGithubOwner('a-b')).toBe(true);
    expect(isValidGithubOwner('-a')).toBe(false);
    // Issue 24, finding 15: GitHub refuses an owner ending with a hyphen, so the reference parser must too.
    expect(() => parseIdentity('gh:acme-/tools/x')).toThrow(expect.objectContaining({ code: 'bad-owner' }));
    expect(() => parseIdentity('https://github.com/acme-/tools')).toThrow(
      expect.objectContaining({ code: 'bad-owner' }),
    );
    expect(isValidGithubOwner('a'.repeat(40))).toBe(false);
    expect(isValidGithubOwner('a_b')).toBe(false);
    expect(isValidGithubRepo('agent-toolkit.v2_x')).toBe(true);
    expect(isValidGithubRepo('..')).toBe(false);
    expect(isValidGithubRepo('a b')).toBe(false);
  });
});

describe('GitHub repositories', () => {
  it('checks owner/repo with both name rules', () => {
    expect(isValidGithubRepositoryName('anthropics/skills')).toBe(true);
    expect(isValidGithubRepositoryName('a-b/c.d_e')).toBe(true);
    // Older accounts may end in a hyphen; GitHub still serves their repositories.
    expect(isValidGithubRepositoryName('owner-/repo')).toBe(true);
    expect(isValidGithubRepositoryName('-owner/repo')).toBe(false);
    expect(isValidGithubRepositoryName('a_b/repo')).toBe(false);
    expect(isValidGithubRepositoryName(`${'a'.repeat(40)}/repo`)).toBe(false);
    expect(isValidGithubRepositoryName('owner/..')).toBe(false);
    expect(isValidGithubRepositoryName('owner/repo/sub')).toBe(false);
    expect(isValidGithubRepositoryName('owner')).toBe(false);
  });

  it('parses every way a repository is written', () => {
    const want = { owner: 'obra', repo: 'superpowers' };
    for (const text of [
      'obra/superpowers',
      'gh:obra/superpowers',
      'GH:obra/superpowers/',
      ' gh:obra/superpowers.git ',
      'https://github.com/obra/superpowers',
      'https://www.github.com/obra/superpowers.git',
      'https://github.com/obra/superpowers/',
    ]) {
      expect(parseGithubRepository(text), text).toEqual(want);
    }
  });

  it('refuses what is not one whole repository, with the identity code', () => {
    const codeOf = (text: string) => {
      try {
        parseGithubRepository(text);
        return 'parsed';
      } catch (error) {
        expect(error).toBeInstanceOf(IdentityError);
        return (error as IdentityError).code;
      }
    };
    expect(codeOf('-bad/repo')).toBe('bad-owner');
    expect(codeOf('gh:owner/re po')).toBe('bad-repo');
    expect(codeOf('gh:owner/repo/skills/x')).toBe('bad-repo');
    expect(codeOf('hub:acme/playbooks')).toBe('unknown-prefix');
    expect(codeOf('gl:owner/repo')).toBe('unknown-prefix');
    expect(codeOf('https://gitlab.com/owner/repo')).toBe('unknown-prefix');
    expect(codeOf('owner')).toBe('incomplete');
    // Unless the caller means the repository of a path (an index request pasted from a skill's page).
    expect(
      parseGithubRepository('https://github.com/obra/superpowers/tree/main/skills/brainstorming', {
        insidePath: 'repository',
      }),
    ).toEqual({ owner: 'obra', repo: 'superpowers' });
  });

  it('encodes each part of a git URL', () => {
    expect(githubGitUrl('https://github.com/', 'obra', 'superpowers')).toBe(
      'https://github.com/obra/superpowers.git',
    );
    expect(githubGitUrl('http://127.0.0.1:9/base', 'o', 'r#x')).toBe('http://127.0.0.1:9/base/o/r%23x.git');
  });
});

describe('splitIdentityPrefix', () => {
  it('splits gh: and hub: in any case, and leaves a bare path whole', () => {
    expect(splitIdentityPrefix('gh:o/r/p')).toEqual({ source: 'gh', rest: 'o/r/p' });
    expect(splitIdentityPrefix('HUB:acme/c')).toEqual({ source: 'hub', rest: 'acme/c' });
    expect(splitIdentityPrefix('deploy/a:b')).toEqual({ source: 'local', rest: 'deploy/a:b' });
    expect(splitIdentityPrefix('gl:o/r')).toEqual({ source: 'local', rest: 'gl:o/r' });
  });

  it('reads an escaped colon only when asked (URLs, not messages)', () => {
    expect(splitIdentityPrefix('gh%3Ao/r')).toEqual({ source: 'local', rest: 'gh%3Ao/r' });
    expect(splitIdentityPrefix('gh%3ao/r', { encodedColon: true })).toEqual({ source: 'gh', rest: 'o/r' });
    expect(splitIdentityPrefix('hub:a/b', { encodedColon: true })).toEqual({ source: 'hub', rest: 'a/b' });
  });
});
