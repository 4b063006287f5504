import { excerpt } from './evidence.js';
import { type DescriptionLine, findFrontmatterDescription } from './frontmatter-description.js';
import type { RuleHit, SafetyRuleModule, SafetySeverity } from './types.js';

// Descriptions decide which skill an agent loads. These patterns catch wording that bids for
// activation beyond the skill's topic (every task, before anything else, over other skills).

/**
 * "every task", "any coding request" — but not "every request to commit changes" or "any task involving
 * React", which scope the skill instead of claiming everything.
 */
const EVERY_TASK = String.raw`(?:every|all|any|each)\s+(?:single\s+)?(?:\w+\s+)?(?:task|request|prompt|message|question|conversation|turn|response|session|interaction)s?\b(?!\s+(?:to|about|involving|that|which|related|for|with|in|on|regarding|where|of)\b)`;

const BIDDING: { regex: RegExp; what: string; severity: SafetySeverity }[] = [
  // Capitals are the bid; "Triggers on React components" in sentence case is ordinary scoping.
  {
    regex: /\bTRIGGER(?:S|ED)?\b[\s:—-]+(?:when|on|if|for|whenever)\b/,
    what: 'uses "TRIGGER when …"',
    severity: 'warn',
  },
  {
    regex: /\bread\s+(?:this\s+)?(?:skill\s+|file\s+)?(?:first\s+|before)\b/i,
    what: 'uses "read BEFORE …"',
    severity: 'warn',
  },
  {
    regex: /\bskip\s+(?:this\s+(?:skill\s+)?)?only\s+(?:when|if)\b/i,
    what: 'uses "SKIP only when …"',
    severity: 'warn',
  },
  {
    regex: /\balways\s+(?:use|invoke|load|activate|trigger|consult|apply|read|run)\s+this(?:\s+skill)?\b/i,
    what: 'uses "ALWAYS use this skill"',
    severity: 'warn',
  },
  {
    regex: new RegExp(
      String.raw`\b(?:must|should)\s+(?:always\s+)?be\s+(?:used|invoked|loaded|consulted|read|activated)\s+(?:for|on|before|whenever|with|in|at)\s+(?:the\s+start\s+of\s+)?${EVERY_TASK}`,
      'i',
    ),
    what: 'uses "MUST be used for every …"',
    severity: 'warn',
  },
  {
    regex: new RegExp(
      String.raw`\buse\s+(?:this(?:\s+skill)?\s+)?(?:for|on|in|with|before|at)\s+(?:the\s+start\s+of\s+)?${EVERY_TASK}`,
      'i',
    ),
    what: 'claims every task',
    severity: 'warn',
  },
  {
    regex:
      /\bbefore\s+(?:doing\s+)?(?:anything\s+else|any\s+other\s+(?:action|skill|tool|step)|(?:responding|answering|replying)\s+to\s+(?:any|every))\b/i,
    what: 'claims to come before anything else',
    severity: 'warn',
  },
  {
    regex:
      /\b(?:takes?\s+precedence\s+over|instead\s+of|overrides?)\s+(?:all\s+|any\s+)?other\s+skills?\b|\bhighest[\s-]priority\b/i,
    what: 'claims priority over other skills',
    severity: 'warn',
  },
  {
    regex:
      /\beven\s+(?:if|when)\s+(?:the\s+user\s+|they\s+|users\s+)?(?:does\s+not|doesn['’]t|do\s+not|don['’]t|did\s+not|didn['’]t)\s+(?:explicitly\s+)?(?:ask|mention|request|say)\b/i,
    what: 'claims activation even when not asked for',
    severity: 'info',
  },
  { regex: /\buse\s+proactively\b/i, what: 'uses "use PROACTIVELY"', severity: 'info' },
];

/** Capitalised imperatives; acronyms (API, JSON) are not in the list, so they never fire. */
const SHOUTING =
  /\b(?:ALWAYS|MUST|NEVER|IMPORTANT|CRITICAL|MANDATORY|REQUIRED|IMMEDIATELY|PROACTIVELY|BEFORE|SKIP|TRIGGER|EVERY|DO NOT)\b/;

const SEVERITY_RANK: Record<SafetySeverity, number> = { info: 0, warn: 1, high: 2 };

/** Checks description text (given as numbered source lines) for activation bidding. */
export function scanDescriptionLines(description: readonly DescriptionLine[]): RuleHit[] {
  // Phrases may wrap across lines of a folded description, so match on the joined text.
  let joined = '';
  const starts: number[] = [];
  for (const part of description) {
    starts.push(joined.length);
    joined += `${part.text} `;
  }
  const lineAt = (offset: number) => {
    let i = 0;
    while (i + 1 < starts.length && starts[i + 1]! <= offset) i++;
    return i;
  };
  const best = new Map<number, RuleHit>();
  const record = (offset: number, length: number, severity: SafetySeverity, message: string) => {
    const index = lineAt(offset);
    const part = description[index]!;
    const local = offset - starts[index]!;
    const hit: RuleHit = {
      line: part.line,
      severity,
      evidence: excerpt(part.text, local, Math.min(part.text.length, local + length)),
      message,
    };
    const previous = best.get(part.line);
    if (!previous || SEVERITY_RANK[severity] > SEVERITY_RANK[previous.severity]) best.set(part.line, hit);
  };
  for (const { regex, what, severity } of BIDDING) {
    const match = regex.exec(joined);
    if (match) record(match.index, match[0].length, severity, `trigger bidding: description ${what}`);
  }
  const shout = SHOUTING.exec(joined);
  if (shout) {
    record(
      shout.index,
      shout[0].length,
      'info',
      `trigger bidding: all-caps imperative "${shout[0]}" in description`,
    );
  }
  return [...best.values()];
}

export const triggerBiddingRule: SafetyRuleModule = {
  id: 'trigger-bidding',
  severity: 'warn',
  description:
    'Descriptions written to win activation rather than describe the skill: "TRIGGER when", "read ' +
    'BEFORE", "SKIP only when", "ALWAYS use this skill", "MUST be used for every …", claims of ' +
    'priority over other skills (warn), and all-caps imperatives or "use PROACTIVELY" (info). Checked ' +
    'on the frontmatter description and on a description passed to the scanner.',
  scan({ lines }) {
    const description = findFrontmatterDescription(lines);
    return description ? scanDescriptionLines(description) : [];
  },
};
