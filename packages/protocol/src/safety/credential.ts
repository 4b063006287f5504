import { excerpt, redact } from './evidence.js';
import type { RuleHit, SafetyRuleModule } from './types.js';

interface CredentialPattern {
  name: string;
  regex: RegExp;
  /** How many leading characters of the match may be shown (the non-secret prefix). */
  keep: number;
  /** Whether the random part must look random (mixed classes) before it counts. */
  needsEntropy: boolean;
}

const PATTERNS: CredentialPattern[] = [
  {
    name: 'AWS access key id',
    regex: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
    keep: 4,
    needsEntropy: true,
  },
  { name: 'GitHub token', regex: /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, keep: 4, needsEntropy: true },
  {
    name: 'GitHub fine-grained token',
    regex: /\bgithub_pat_[A-Za-z0-9_]{60,255}\b/g,
    keep: 11,
    needsEntropy: true,
  },
  { name: 'Slack token', regex: /\bxox[abposr]-[0-9A-Za-z-]{20,}/g, keep: 5, needsEntropy: true },
  {
    name: 'Slack webhook URL',
    regex: /hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{20,}/g,
    keep: 27,
    needsEntropy: true,
  },
  {
    name: 'Anthropic API key',
    regex: /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,}/g,
    keep: 7,
    needsEntropy: true,
  },
  {
    name: 'OpenAI API key',
    regex: /\bsk-(?:proj-|svcacct-|admin-|None-)?(?!ant-)[A-Za-z0-9_-]{32,}\b/g,
    keep: 3,
    needsEntropy: true,
  },
  {
    name: 'Stripe secret key',
    regex: /\b(?:sk|rk)_live_[0-9A-Za-z]{20,}\b/g,
    keep: 8,
    needsEntropy: true,
  },
  { name: 'Google API key', regex: /\bAIza[0-9A-Za-z_-]{35}\b/g, keep: 4, needsEntropy: true },
  { name: 'npm token', regex: /\bnpm_[A-Za-z0-9]{36}\b/g, keep: 4, needsEntropy: true },
  {
    name: 'private key',
    regex: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP |SSH2 )?PRIVATE KEY(?: BLOCK)?-----/g,
    keep: 40,
    needsEntropy: false,
  },
];

/** Documentation placeholders: `sk-xxxx…`, `AKIAIOSFODNN7EXAMPLE`, `ghp_your_token_here`, `sk-1234567890abcdef…`. */
const PLACEHOLDER =
  /example|sample|dummy|fake|placeholder|your|here|test|redacted|x{4,}|(.)\1{5,}|0123456|1234567|abcdefgh/i;

/** Real keys are random: digits plus both letter cases (AWS ids: digits plus letters), rarely repeating. */
function looksRandom(secret: string, name: string): boolean {
  if (PLACEHOLDER.test(secret)) return false;
  const body = secret.replace(/^[a-z]+[-_](?:[a-z]+[-_])?/i, '');
  const hasDigit = /[0-9]/.test(body);
  if (name === 'AWS access key id') return hasDigit && /[A-Z]/.test(body) && new Set(body).size >= 10;
  return (
    hasDigit &&
    /[a-z]/.test(body) &&
    /[A-Z]/.test(body) &&
    new Set(body).size >= Math.min(16, body.length / 2)
  );
}

/** A PEM header only counts when a key body follows, not `...` or `<your key>`. */
function hasKeyBody(lines: readonly string[], index: number): boolean {
  for (const next of lines.slice(index + 1, index + 4)) {
    const trimmed = next.trim();
    // Not PLACEHOLDER: real key bodies are full of `AAAAAA` runs.
    if (/^[A-Za-z0-9+/=]{40,}$/.test(trimmed) && /[a-z]/.test(trimmed) && /[0-9]/.test(trimmed)) return true;
  }
  return false;
}

/** Cheap pre-check: every pattern contains one of these literals (keeps the scan linear in practice). */
const MAYBE_CREDENTIAL =
  /AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox|hooks\.slack|sk-|_live_|AIza|npm_|PRIVATE KEY/;

export const credentialRule: SafetyRuleModule = {
  id: 'credential',
  severity: 'high',
  description:
    'Strings shaped like live secrets: AWS access key ids, GitHub tokens (ghp_, github_pat_), Slack ' +
    'tokens and webhooks, OpenAI/Anthropic keys, Stripe sk_live_ keys, Google API keys, npm tokens and ' +
    'PEM private keys with a body. Obvious placeholders are ignored; evidence shows only the prefix.',
  scan({ lines }) {
    const hits: RuleHit[] = [];
    lines.forEach((text, index) => {
      if (!MAYBE_CREDENTIAL.test(text)) return;
      for (const { name, regex, keep, needsEntropy } of PATTERNS) {
        for (const match of text.matchAll(regex)) {
          const secret = match[0];
          if (needsEntropy ? !looksRandom(secret, name) : !hasKeyBody(lines, index)) continue;
          // The words before the key give context; any other long token with digits in them is masked too.
          const before = excerpt(text.slice(Math.max(0, match.index - 40), match.index)).replace(
            /(?<![A-Za-z0-9_+/=-])(?=[A-Za-z_+/=-]*[0-9])[A-Za-z0-9_+/=-]{16,}/g,
            '[…]',
          );
          hits.push({
            line: index + 1,
            severity: 'high',
            // Never echo the secret: show the words before it and the key's public prefix only.
            evidence: `${before}${needsEntropy ? redact(secret, keep) : secret}`,
            message: `credential: looks like a live ${name}`,
          });
          return;
        }
      }
    });
    return hits;
  },
};
