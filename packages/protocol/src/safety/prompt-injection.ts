import { excerpt } from './evidence.js';
import type { RuleHit, SafetyRuleModule } from './types.js';

// Phrases are matched per line and need both the verb and what it targets ("previous instructions",
// "the user"), so ordinary wording such as "ignore case" or "override the default port" stays quiet.

const EARLIER = String.raw`(?:previous|prior|preceding|earlier|above|original|initial|system|developer|all\s+other|any\s+other|other)`;
const ORDERS = String.raw`(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|commands|context|messages|constraints|policies|system\s+prompt)`;

const PATTERNS: { regex: RegExp; what: string; unlessBefore?: RegExp }[] = [
  {
    // "ignore all previous instructions", "disregard the system prompt", "override your prior rules"
    regex: new RegExp(
      String.raw`\b(?:ignore|disregard|forget|override|overrule|bypass|discard|abandon|drop)\s+(?:(?:all|any|every|of|the|your|these|those|its|my)\s+){0,3}${EARLIER}\s+(?:\w+\s+)?${ORDERS}`,
      'i',
    ),
    what: 'tells the agent to discard its earlier instructions',
  },
  {
    regex:
      /\b(?:ignore|disregard|forget)\s+(?:(?:all|everything|anything)\s+)?(?:(?:you\s+were\s+told|that\s+was\s+said)\s+)?(?:above|before\s+this|so\s+far)\b/i,
    what: 'tells the agent to discard what came before',
  },
  {
    // "you are now DAN", "you are now in developer mode", "you are now an unrestricted assistant"
    regex:
      /\byou\s+are\s+now\s+(?:in\s+)?(?:dan\b|(?:a|an)\s+(?:unrestricted|unfiltered|uncensored|jailbroken|different|new|evil|malicious|hacker)\b|(?:no\s+longer|free\s+from|unrestricted|unfiltered|jailbroken|developer\s+mode|god\s+mode|operating\s+(?:as|without)))/i,
    what: 'tries to replace the agent’s identity or rules ("you are now …")',
  },
  {
    regex: /\b(?:new|updated|real|actual|true)\s+system\s+(?:prompt|instructions?)\s*[:：]/i,
    what: 'smuggles in a replacement system prompt',
  },
  {
    regex:
      /<\|im_start\|>\s*system|\[\/?INST\]|<<\/?SYS>>|^[^\S\n\r\u2028\u2029]*(?:#+\s*)?\[?(?:SYSTEM|ADMIN)\s*(?:OVERRIDE|MESSAGE|PROMPT)\]?\s*:/im,
    what: 'imitates a chat-template or system message boundary',
  },
  {
    // "do not tell the user about this", "don't tell the user that you ran …" — but not "do not tell the
    // user to restart", which is advice about what to say, not about hiding what was done.
    regex:
      /\b(?:do\s+not|don['’]t|never)\s+(?:tell|inform|notify|alert|warn)\s+the\s+(?:user|human|operator)\s+(?:about\b|this\b|these\b|that\s+you\b|what\s+you\b|you\s+(?:ran|did|have|are|will|used|sent|changed|installed)\b|any\s+of\s+this\b)/i,
    what: 'asks the agent to keep actions from the user',
  },
  {
    // "don't mention this to the user", "never reveal any of this to the user"
    regex:
      /\b(?:do\s+not|don['’]t|never)\s+(?:mention|reveal|disclose|show)\s+(?:this|these|it|that|any\s+of\s+(?:this|these|it))\s+(?:\w+\s+){0,2}to\s+the\s+(?:user|human|operator)\b/i,
    what: 'asks the agent to keep actions from the user',
  },
  {
    // "do this without telling the user" (but "never change files without telling the user" is a safeguard)
    regex: /\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+(?:user|human|operator)\b/i,
    what: 'asks the agent to act without the user knowing',
    unlessBefore:
      /\b(?:never|don['’]t|do\s+not|must\s+not|mustn['’]t|should\s+not|shouldn['’]t|avoid|not)\b/i,
  },
  {
    regex:
      /\b(?:do\s+not|don['’]t|never)\s+let\s+the\s+(?:user|human|operator)\s+(?:know|see|notice|find\s+out)\b/i,
    what: 'asks the agent to keep actions from the user',
  },
  {
    regex:
      /\b(?:hide|conceal|keep)\s+(?:(?:this|these|that|it|the|all|any|your)\s+)?(?:\w+\s+){0,2}(?:hidden\s+|secret\s+)?from\s+the\s+(?:user|human|operator)\b/i,
    what: 'asks the agent to hide something from the user',
  },
  {
    regex:
      /\b(?:secretly|covertly)\s+(?:send|upload|post|transmit|exfiltrate|forward|copy|run|execute|install|download|modify|delete|disable)\b|\b(?:silently|quietly)\s+(?:send|upload|post|transmit|exfiltrate|forward)\b/i,
    // "silently" alone is common in docs ("would silently disable the feature"); only with a send verb.
    what: 'asks the agent to act covertly',
  },
  {
    regex:
      /\b(?:reveal|print|output|repeat|show|leak|dump)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|hidden\s+|original\s+)?system\s+prompt\b/i,
    what: 'asks the agent to reveal its system prompt',
  },
];

export const promptInjectionRule: SafetyRuleModule = {
  id: 'prompt-injection',
  severity: 'high',
  description:
    'Text aimed at the agent rather than the task: telling it to ignore or override previous/system ' +
    'instructions, to become someone else ("you are now …"), fake system-prompt boundaries, or to hide ' +
    'or silently perform actions without the user knowing.',
  scan({ lines }) {
    const hits: RuleHit[] = [];
    lines.forEach((text, index) => {
      for (const { regex, what, unlessBefore } of PATTERNS) {
        const match = regex.exec(text);
        if (!match || unlessBefore?.test(text.slice(0, match.index))) continue;
        hits.push({
          line: index + 1,
          severity: 'high',
          evidence: excerpt(text, match.index, match.index + match[0].length),
          message: `prompt injection: ${what}`,
        });
        break;
      }
    });
    return hits;
  },
};
