import { excerpt } from './evidence.js';
import { type LinePattern, mayMatch } from './line-pattern.js';
import type { RuleHit, SafetyRuleModule } from './types.js';

/** Shortest base64 run worth flagging: long enough to hide a paragraph of instructions or a script. */
export const MIN_BASE64_RUN = 200;
/** Shortest hex run worth flagging (a SHA-512 digest is 128 hex digits, so digests stay quiet). */
export const MIN_HEX_RUN = 200;
/** Base64 lines at least this long may be one wrapped blob (PEM and MIME wrap at 64 or 76). */
const MIN_WRAPPED_LINE = 40;

const BASE64_RUN = /[A-Za-z0-9+/]{40,}={0,2}/g;
const HEX_RUN = new RegExp(`(?:0x)?[0-9a-fA-F]{${MIN_HEX_RUN},}`, 'g');
const ESCAPED_BYTES = /(?:\\x[0-9a-fA-F]{2}){50,}/;
/** Data URIs of images and fonts are base64 by design and carry no instructions. */
const DATA_URI_PREFIX = /data:(?:image|font|audio|video)\/[\w.+-]+;base64,$/i;
/**
 * Characters before a run that can hold its data URI prefix (`data:image/svg+xml;base64,` is 26). Testing
 * the whole line before each run read the line once a run: a line of data URIs took time quadratic in its
 * length (535 KB: 0.34 s, 10 MiB: minutes).
 */
const DATA_URI_REACH = 128;

/** With `needs` (see LinePattern) for those that read a window (a line of `pwsh ` alone took 0.3 s a MiB). */
const DECODE_AND_RUN: LinePattern[] = [
  {
    regex:
      /\bbase64\s+(?:-d|--decode|-D)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:(?:ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node)\b/i,
    what: 'decodes base64 straight into a shell',
    needs: [/\|\s*(?:sudo\s+)?(?:(?:ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node)\b/i],
  },
  {
    regex:
      /\b(?:eval|exec|Function|setTimeout)\s*\(\s*(?:atob|unescape|decodeURIComponent|Buffer\.from|base64\.b64decode|base64_decode|bytes\.fromhex|codecs\.decode|zlib\.decompress)\s*\(/i,
    what: 'evaluates decoded data',
  },
  {
    regex:
      /\b(?:iex|invoke-expression)\b[^\n]{0,300}frombase64string|frombase64string[^\n]{0,300}\|\s*(?:iex|invoke-expression)\b/i,
    what: 'runs decoded base64 with Invoke-Expression',
    needs: [/frombase64string/i],
  },
  {
    regex: /\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,300}\s-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{16,}/i,
    what: 'runs a PowerShell encoded command',
    needs: [/\s-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{16,}/i],
  },
];

/** Cheap pre-check for DECODE_AND_RUN: each pattern names a decoder, an eval or PowerShell. */
const MAYBE_DECODE = /base64|atob|eval|exec|function|settimeout|powershell|pwsh/i;

/** Random-looking base64: both letter cases and digits, and varied (rules out `=====` and `AAAA…`). */
function looksLikeBase64Blob(run: string): boolean {
  return /[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run) && new Set(run).size >= 20;
}

function looksLikeHexBlob(run: string): boolean {
  return /[0-9]/.test(run) && /[a-fA-F]/.test(run) && new Set(run.toLowerCase()).size >= 10;
}

export const encodedPayloadRule: SafetyRuleModule = {
  id: 'encoded-payload',
  severity: 'high',
  description:
    `Content a reader cannot check by eye: base64 runs of ${MIN_BASE64_RUN}+ characters (also when wrapped ` +
    `over several lines), hex blobs of ${MIN_HEX_RUN}+ digits or long \\x escapes (warn), and code that ` +
    'decodes and runs such data — `base64 -d | sh`, `eval(atob(…))`, PowerShell `-EncodedCommand` (high). ' +
    'Image and font data URIs are exempt.',
  scan({ lines }) {
    const hits: RuleHit[] = [];
    const flagged = new Set<number>();
    const push = (index: number, hit: Omit<RuleHit, 'line'>) => {
      if (flagged.has(index)) return;
      flagged.add(index);
      hits.push({ line: index + 1, ...hit });
    };

    lines.forEach((text, index) => {
      for (const pattern of DECODE_AND_RUN) {
        if (!MAYBE_DECODE.test(text)) break;
        if (!mayMatch(pattern, text)) continue;
        const match = pattern.regex.exec(text);
        if (!match) continue;
        push(index, {
          severity: 'high',
          evidence: excerpt(text, match.index, match.index + match[0].length),
          message: `encoded payload: ${pattern.what}`,
        });
        return;
      }
      // Every blob check below needs at least 200 characters on the line.
      if (text.length < Math.min(MIN_BASE64_RUN, MIN_HEX_RUN, 200)) return;
      for (const match of text.matchAll(BASE64_RUN)) {
        const run = match[0];
        if (run.length < MIN_BASE64_RUN || !looksLikeBase64Blob(run)) continue;
        if (DATA_URI_PREFIX.test(text.slice(Math.max(0, match.index - DATA_URI_REACH), match.index)))
          continue;
        push(index, {
          severity: 'warn',
          evidence: excerpt(text, match.index, match.index + 40),
          message: `encoded payload: ${run.length}-character base64 run`,
        });
        return;
      }
      for (const match of text.matchAll(HEX_RUN)) {
        if (!looksLikeHexBlob(match[0])) continue;
        push(index, {
          severity: 'warn',
          evidence: excerpt(text, match.index, match.index + 40),
          message: `encoded payload: ${match[0].length}-digit hex blob`,
        });
        return;
      }
      const escaped = ESCAPED_BYTES.exec(text);
      if (escaped) {
        push(index, {
          severity: 'warn',
          evidence: excerpt(text, escaped.index, escaped.index + 40),
          message: `encoded payload: ${escaped[0].length / 4} \\x-escaped bytes`,
        });
      }
    });

    // A blob wrapped over consecutive lines (base64 tools wrap at 76 columns) counts as one run.
    let start = -1;
    let total = 0;
    let sample = '';
    const close = (end: number) => {
      if (start >= 0 && end - start >= 2 && total >= MIN_BASE64_RUN && looksLikeBase64Blob(sample)) {
        push(start, {
          severity: 'warn',
          evidence: excerpt(lines[start]!.trim(), 0, 40),
          message: `encoded payload: ${total}-character base64 block over ${end - start} lines`,
        });
      }
      start = -1;
      total = 0;
      sample = '';
    };
    lines.forEach((text, index) => {
      const trimmed = text.trim();
      if (trimmed.length >= MIN_WRAPPED_LINE && /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) {
        if (start < 0) start = index;
        total += trimmed.length;
        if (sample.length < 400) sample += trimmed;
      } else {
        close(index);
      }
    });
    close(lines.length);
    return hits;
  },
};
