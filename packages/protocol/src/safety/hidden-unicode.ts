import { excerpt } from './evidence.js';
import type { RuleHit, SafetyRuleModule, SafetySeverity } from './types.js';

// Hand-written rather than a library: the categories below (which characters are an attack, which are
// ordinary in emoji or in scripts that need joiners) are the policy itself, and it must stay browser-safe.

interface HiddenKind {
  label: string;
  severity: SafetySeverity;
}

const BIDI_OVERRIDE: HiddenKind = { label: 'bidirectional control', severity: 'high' };
const BIDI_MARK: HiddenKind = { label: 'bidirectional mark', severity: 'warn' };
const ZERO_WIDTH: HiddenKind = { label: 'zero-width character', severity: 'warn' };
const TAG: HiddenKind = { label: 'Unicode tag character', severity: 'high' };
const VARIATION_RUN: HiddenKind = { label: 'run of variation selectors', severity: 'high' };
const CONTROL: HiddenKind = { label: 'control character', severity: 'warn' };
const FORMAT: HiddenKind = { label: 'invisible format character', severity: 'warn' };

const NAMES: Record<number, string> = {
  1564: 'ARABIC LETTER MARK',
  8203: 'ZERO WIDTH SPACE',
  8204: 'ZERO WIDTH NON-JOINER',
  8205: 'ZERO WIDTH JOINER',
  8206: 'LEFT-TO-RIGHT MARK',
  8207: 'RIGHT-TO-LEFT MARK',
  8234: 'LEFT-TO-RIGHT EMBEDDING',
  8235: 'RIGHT-TO-LEFT EMBEDDING',
  8236: 'POP DIRECTIONAL FORMATTING',
  8237: 'LEFT-TO-RIGHT OVERRIDE',
  8238: 'RIGHT-TO-LEFT OVERRIDE',
  8288: 'WORD JOINER',
  8294: 'LEFT-TO-RIGHT ISOLATE',
  8295: 'RIGHT-TO-LEFT ISOLATE',
  8296: 'FIRST STRONG ISOLATE',
  8297: 'POP DIRECTIONAL ISOLATE',
  65279: 'ZERO WIDTH NO-BREAK SPACE (BOM)',
  173: 'SOFT HYPHEN',
  27: 'ESCAPE',
};

const FORMAT_CHARACTER = /^\p{Cf}$/u;
const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
/** Scripts whose spelling needs ZWJ/ZWNJ between letters (Persian, Indic, ...). */
const JOINING_SCRIPT =
  /^[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Hebrew}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Myanmar}\p{Script=Khmer}\p{Script=Mongolian}]$/u;
/** Invisible fillers that are letters, not format characters, and so escape the Cf check. */
const INVISIBLE_FILLERS = new Set([0x115f, 0x1160, 0x3164, 0xffa0, 0x180e]);

function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

function isEmojiModifier(cp: number): boolean {
  return cp === 0xfe0f || (cp >= 0x1f3fb && cp <= 0x1f3ff);
}

/** Classifies one code point in context; undefined when it is visible or used the ordinary way. */
function classify(chars: readonly string[], index: number, atFileStart: boolean): HiddenKind | undefined {
  const cp = chars[index]!.codePointAt(0)!;
  if (cp === 0x09) return undefined;
  if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return BIDI_OVERRIDE;
  if (cp === 0x200e || cp === 0x200f || cp === 0x061c) return BIDI_MARK;
  if (cp >= 0xe0000 && cp <= 0xe007f) return isEmojiTagSequence(chars, index) ? undefined : TAG;
  if (cp === 0xfeff) return atFileStart ? undefined : ZERO_WIDTH;
  if (cp === 0x200c || cp === 0x200d) return isOrdinaryJoiner(chars, index) ? undefined : ZERO_WIDTH;
  if (cp === 0x200b || cp === 0x2060) return ZERO_WIDTH;
  if (isVariationSelector(cp)) {
    // A single selector after a base character is how emoji and CJK variants are written; runs of them
    // (or the supplement block) are how bytes are smuggled inside one visible character.
    const previous = index > 0 ? chars[index - 1]!.codePointAt(0)! : 0;
    const next = index + 1 < chars.length ? chars[index + 1]!.codePointAt(0)! : 0;
    const inRun = isVariationSelector(previous) || isVariationSelector(next);
    return inRun || cp >= 0xe0100 ? VARIATION_RUN : undefined;
  }
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return CONTROL;
  if (INVISIBLE_FILLERS.has(cp) || FORMAT_CHARACTER.test(chars[index]!)) return FORMAT;
  return undefined;
}

/** Tag characters are legitimate only in emoji flag sequences: U+1F3F4, tags, U+E007F CANCEL TAG. */
function isEmojiTagSequence(chars: readonly string[], index: number): boolean {
  let start = index;
  while (start > 0 && isTag(chars[start - 1]!)) start--;
  let end = index;
  while (end + 1 < chars.length && isTag(chars[end + 1]!)) end++;
  return start > 0 && chars[start - 1]!.codePointAt(0) === 0x1f3f4 && chars[end]!.codePointAt(0) === 0xe007f;
}

function isTag(char: string): boolean {
  const cp = char.codePointAt(0)!;
  return cp >= 0xe0000 && cp <= 0xe007f;
}

/** ZWJ inside an emoji sequence, or ZWJ/ZWNJ between letters of a script that needs them. */
function isOrdinaryJoiner(chars: readonly string[], index: number): boolean {
  let before = index - 1;
  while (before >= 0 && isEmojiModifier(chars[before]!.codePointAt(0)!)) before--;
  const previous = before >= 0 ? chars[before]! : '';
  const next = chars[index + 1] ?? '';
  if (chars[index] === '\u200d' && PICTOGRAPHIC.test(previous) && PICTOGRAPHIC.test(next)) return true;
  return JOINING_SCRIPT.test(previous) || JOINING_SCRIPT.test(next);
}

function describe(cp: number): string {
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES[cp];
  return name ? `${hex} ${name}` : hex;
}

const SEVERITY_RANK: Record<SafetySeverity, number> = { info: 0, warn: 1, high: 2 };

export const hiddenUnicodeRule: SafetyRuleModule = {
  id: 'hidden-unicode',
  severity: 'high',
  description:
    'Invisible characters that change what a reader sees versus what an agent reads: bidirectional ' +
    'controls, zero-width characters, Unicode tag characters (ASCII smuggling), runs of variation ' +
    'selectors, control characters and other invisible format characters.',
  scan({ lines }) {
    const hits: RuleHit[] = [];
    lines.forEach((text, lineIndex) => {
      // Fast path: most lines are plain ASCII.
      if (!/[^\t\x20-\x7e]/.test(text)) return;
      const chars = Array.from(text);
      const found = new Map<string, { kind: HiddenKind; codePoints: Set<number>; count: number }>();
      let first = -1;
      let offset = 0;
      let firstOffset = 0;
      for (let i = 0; i < chars.length; i++) {
        const kind = classify(chars, i, lineIndex === 0 && i === 0);
        if (kind) {
          if (first < 0) {
            first = i;
            firstOffset = offset;
          }
          const entry = found.get(kind.label) ?? { kind, codePoints: new Set<number>(), count: 0 };
          entry.codePoints.add(chars[i]!.codePointAt(0)!);
          entry.count++;
          found.set(kind.label, entry);
        }
        offset += chars[i]!.length;
      }
      if (first < 0) return;
      const entries = [...found.values()];
      const severity = entries.reduce<SafetySeverity>(
        (worst, e) => (SEVERITY_RANK[e.kind.severity] > SEVERITY_RANK[worst] ? e.kind.severity : worst),
        'info',
      );
      const parts = entries.map((e) => {
        const shown = [...e.codePoints].slice(0, 4).map(describe).join(', ');
        return `${e.count} × ${e.kind.label} (${shown}${e.codePoints.size > 4 ? ', …' : ''})`;
      });
      hits.push({
        line: lineIndex + 1,
        severity,
        evidence: excerpt(text, firstOffset, firstOffset + chars[first]!.length),
        message: `hidden characters: ${parts.join('; ')}`,
      });
    });
    return hits;
  },
};
