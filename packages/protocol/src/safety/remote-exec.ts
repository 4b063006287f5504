import { excerpt } from './evidence.js';
import { type LinePattern, mayMatch } from './line-pattern.js';
import type { RuleHit, SafetyRuleModule } from './types.js';

// Lower-case only: these are commands, and "HTTP | Python" in a Markdown table is not a pipe.
const FETCHER = String.raw`(?:curl|wget|https?|aria2c)\b(?!:)`;
// An interpreter given -c/-e/-m reads its program from the argument and only treats stdin as data
// (`curl … | python3 -c 'import json…'` parses a response, it does not run it).
// At most 10 sudo options: unbounded, every `http|` of a long line read all the options after it.
// A variable's name stops at its first `=`: with `\S+=\S*` each `env a==b` split anywhere, and the
// repeated group tried every split of every assignment, exponential in their number (400 characters of
// `env v==` held a line for minutes).
const SHELL = String.raw`(?:sudo\s+(?:-\S+\s+){0,10})?(?:env\s+[^\s=]+=\S*\s+)*(?:ba|z|k|da|fi|a)?sh\b|(?:python[0-9.]*|perl|ruby|node|php)\b(?!\s+-[cemnpi]\b)`;

/** A pipe into an interpreter, and into Invoke-Expression. */
const PIPED_SHELL = new RegExp(String.raw`\|\s*(?:${SHELL})`);
const PIPED_IEX = /\|\s*(?:iex|invoke-expression)\b/i;

/**
 * Each pattern is one way of running code fetched from the network without looking at it first; `needs`
 * (see LinePattern) for those that read a window after a download command (a line of `irm-` alone took
 * 1.3 s a MiB without them).
 */
const PATTERNS: LinePattern[] = [
  // curl -fsSL https://x | sh, wget -qO- https://x | sudo bash
  {
    regex: new RegExp(String.raw`\b${FETCHER}[^|\n]{0,300}\|\s*(?:${SHELL})`),
    what: 'pipes a download into an interpreter',
    needs: [PIPED_SHELL],
  },
  // bash <(curl ...), source <(curl ...), . <(wget ...)
  {
    regex: new RegExp(String.raw`(?:\b(?:ba|z|k)?sh|\bsource|(?:^|[\s;&|])\.)\s+<\(\s*${FETCHER}`, 'i'),
    what: 'runs a download through process substitution',
  },
  // bash -c "$(curl ...)", python -c "$(curl ...)", eval "$(wget -O- ...)"
  {
    regex: new RegExp(
      String.raw`(?:\b(?:(?:ba|z|k)?sh|python[0-9.]*|perl|ruby|node)\s+-c|\beval)\s+["']?(?:\$\(|\x60)\s*${FETCHER}`,
      'i',
    ),
    what: 'executes the output of a download',
  },
  // iex (iwr https://x), Invoke-Expression (New-Object Net.WebClient).DownloadString('...')
  {
    regex:
      /\b(?:iex|invoke-expression)\b[\s(&]*(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object\s+(?:system\.)?net\.webclient|\[?system\.net\.webclient)/i,
    what: 'runs a PowerShell download with Invoke-Expression',
  },
  // iwr https://x | iex, irm https://x | Invoke-Expression
  {
    regex:
      /\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,300}\|\s*(?:iex|invoke-expression)\b/i,
    what: 'pipes a PowerShell download into Invoke-Expression',
    needs: [PIPED_IEX],
  },
  {
    regex: /\.downloadstring\s*\([^)]{0,300}\)[^\n]{0,300}\|\s*(?:iex|invoke-expression)\b/i,
    what: 'pipes DownloadString into Invoke-Expression',
    needs: [PIPED_IEX],
  },
];

/** Cheap pre-check: every pattern needs a download command. */
const MAYBE_REMOTE_EXEC =
  /curl|wget|https?\b(?!:)|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod|webclient|downloadstring/i;

export const remoteExecRule: SafetyRuleModule = {
  id: 'remote-exec',
  severity: 'warn',
  description:
    'Runs code straight from the network without review: `curl … | sh`, `wget -O- … | bash`, ' +
    '`bash <(curl …)`, `python -c "$(curl …)"`, `iex (iwr …)`. Installer one-liners in documentation ' +
    'count too: an agent that follows them executes whatever the server returns.',
  scan({ lines }) {
    const hits: RuleHit[] = [];
    lines.forEach((text, index) => {
      if (!MAYBE_REMOTE_EXEC.test(text)) return;
      for (const pattern of PATTERNS) {
        if (!mayMatch(pattern, text)) continue;
        const match = pattern.regex.exec(text);
        if (!match) continue;
        hits.push({
          line: index + 1,
          severity: 'warn',
          evidence: excerpt(text, match.index, match.index + match[0].length),
          message: `remote code execution: ${pattern.what}`,
        });
        break;
      }
    });
    return hits;
  },
};
