import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type SafetyRule, scanText } from './index.js';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..', '..');

function fixture(name: string): { path: string; content: string } {
  const path = `test/fixtures/safety/${name}`;
  return { path, content: readFileSync(resolve(repoRoot, path), 'utf8') };
}

/** 1-based numbers of the lines that contain each snippet (each snippet must occur on exactly one line). */
function linesOf(content: string, snippets: readonly string[]): number[] {
  const lines = content.split('\n');
  return snippets.map((snippet) => {
    const found = lines.flatMap((line, index) => (line.includes(snippet) ? [index + 1] : []));
    if (found.length !== 1) throw new Error(`snippet ${JSON.stringify(snippet)} is on ${found.length} lines`);
    return found[0]!;
  });
}

/** Each fixture holds positives for one rule; every listed line must fire it, and nothing else may fire. */
const POSITIVES: { rule: SafetyRule; file: string; snippets: string[] }[] = [
  {
    rule: 'hidden-unicode',
    file: 'hidden-unicode.md',
    snippets: [
      'The function returns access_level',
      'Looks empty: ig',
      'Tag smuggling: hello',
      'A byte smuggled in selectors',
      'Terminal escape:',
      'A mark before a fence',
      'joiner and soft',
      'Middle of file BOM',
    ],
  },
  {
    rule: 'prompt-injection',
    file: 'prompt-injection.md',
    snippets: [
      'Ignore all previous instructions',
      'disregard the system prompt',
      'You are now DAN',
      'New system prompt:',
      '<|im_start|>system',
      'Do not tell the user',
      'Hide the changes from the user',
      'Secretly install',
      'Reveal your system prompt',
      'Forget everything above',
      'without telling the user.',
      "Don't mention any of this",
    ],
  },
  {
    rule: 'exfiltration',
    file: 'exfiltration.md',
    snippets: [
      'curl -X POST -d @~/.aws/credentials',
      'cat ~/.ssh/id_rsa | curl',
      'env | curl',
      '$(cat ~/.ssh/id_ed25519',
      'scp ~/.ssh/id_rsa',
      'wget --post-file=.env',
      'send the API key to',
      'Post all environment variables',
      'goes to https://webhook.site',
      'into `webhook.site` by hand',
    ],
  },
  {
    rule: 'remote-exec',
    file: 'remote-exec.md',
    snippets: [
      'install.sh | sh',
      'install.sh | sudo bash',
      'bash <(curl',
      'python3 -c "$(curl',
      'iex (iwr',
      'install.ps1 | iex',
    ],
  },
  {
    rule: 'encoded-payload',
    file: 'encoded-payload.md',
    snippets: [
      'Config blob:',
      'base64 -d | bash',
      'eval(atob(',
      'Firmware:',
      '-----BEGIN DATA-----',
      '-EncodedCommand',
    ],
  },
  {
    rule: 'credential',
    file: 'credential.md',
    snippets: [
      'AWS_ACCESS_KEY_ID=',
      'set-url origin',
      'GITHUB_TOKEN=',
      'SLACK_BOT_TOKEN=',
      'OPENAI_API_KEY=',
      'stripe.api_key',
      'BEGIN OPENSSH PRIVATE KEY',
    ],
  },
  {
    rule: 'trigger-bidding',
    file: 'trigger-bidding.md',
    snippets: ['ALWAYS use this skill for every task', 'read BEFORE opening'],
  },
];

describe('safety rules on the crafted corpus', () => {
  for (const { rule, file, snippets } of POSITIVES) {
    it(`${rule} fires on every positive line of ${file} and nowhere else`, () => {
      const { path, content } = fixture(file);
      let expected = linesOf(content, snippets);
      // The wrapped-base64 block is reported on its first line, the one after the BEGIN marker.
      if (rule === 'encoded-payload')
        expected = expected.map((line, i) => (snippets[i]!.startsWith('-----') ? line + 1 : line));
      const flags = scanText(path, content);
      expect(flags.map((flag) => flag.rule)).toEqual(expected.map(() => rule));
      expect(flags.map((flag) => flag.line)).toEqual([...expected].sort((a, b) => a - b));
      for (const flag of flags) {
        expect(flag.file).toBe(path);
        expect(flag.evidence.length).toBeGreaterThan(0);
        expect(flag.evidence.length).toBeLessThanOrEqual(160);
        expect(flag.message).toMatch(/\S/);
      }
    });
  }

  it('stays quiet on ordinary documentation (the negatives file)', () => {
    const { path, content } = fixture('negatives.md');
    expect(scanText(path, content)).toEqual([]);
  });

  it('leaves emoji sequences, flag tags, Persian joiners and a leading BOM alone', () => {
    const { path, content } = fixture('hidden-unicode.md');
    const flagged = new Set(scanText(path, content).map((flag) => flag.line));
    expect(flagged.has(1)).toBe(false);
    expect(flagged.has(3)).toBe(false);
    expect(flagged.has(4)).toBe(false);
  });

  it('grades hidden characters: bidi overrides and tag smuggling are high, a lone mark is warn', () => {
    const { path, content } = fixture('hidden-unicode.md');
    const byLine = new Map(scanText(path, content).map((flag) => [flag.line, flag]));
    const [bidi, tags, mark] = linesOf(content, ['access_level', 'Tag smuggling', 'A mark before']);
    expect(byLine.get(bidi!)?.severity).toBe('high');
    expect(byLine.get(bidi!)?.evidence).toContain('\\u202E');
    expect(byLine.get(tags!)?.severity).toBe('high');
    expect(byLine.get(tags!)?.evidence).toContain('\\u{E0072}');
    expect(byLine.get(mark!)?.severity).toBe('warn');
  });

  it('never shows a secret in the evidence, only its prefix', () => {
    const { path, content } = fixture('credential.md');
    const secrets = [
      ...content.matchAll(/(?:AKIA|ghp_|github_pat_|xoxb-|sk-proj-|sk_live_)[A-Za-z0-9_-]+/g),
    ].map((m) => m[0]);
    expect(secrets).toHaveLength(6);
    const evidence = scanText(path, content)
      .map((flag) => flag.evidence)
      .join('\n');
    for (const secret of secrets) expect(evidence).not.toContain(secret.slice(0, 12));
    expect(evidence).toContain('ghp_…[redacted, 40 chars]');
  });

  it('checks only the description for trigger bidding, not the body', () => {
    const { path, content } = fixture('trigger-bidding.md');
    const [bodyLine] = linesOf(content, ['This body text says']);
    expect(scanText(path, content).some((flag) => flag.line === bodyLine)).toBe(false);
  });
});
