import { credentialRule } from './credential.js';
import { encodedPayloadRule } from './encoded-payload.js';
import { exfiltrationRule } from './exfiltration.js';
import { hiddenUnicodeRule } from './hidden-unicode.js';
import { promptInjectionRule } from './prompt-injection.js';
import { remoteExecRule } from './remote-exec.js';
import { triggerBiddingRule } from './trigger-bidding.js';
import type { SafetyRule, SafetyRuleModule, SafetySeverity } from './types.js';

/** Every rule the scanner runs, in documentation order. */
export const RULE_MODULES: readonly SafetyRuleModule[] = [
  hiddenUnicodeRule,
  promptInjectionRule,
  exfiltrationRule,
  remoteExecRule,
  encodedPayloadRule,
  credentialRule,
  triggerBiddingRule,
];

/** What a rule checks, for docs and the web page. */
export interface SafetyRuleInfo {
  id: SafetyRule;
  /** The most severe level the rule reports; some hits are reported lower (see the description). */
  severity: SafetySeverity;
  description: string;
}

/** The rules with their id, (maximum) severity and a description. */
export const SAFETY_RULES: readonly SafetyRuleInfo[] = Object.freeze(
  RULE_MODULES.map(({ id, severity, description }) => Object.freeze({ id, severity, description })),
);

/**
 * The version of the scanner's verdicts, stored with every cached verdict (safety_verdicts.scanner_version,
 * keyed by a skill's content hash) by the crawler and by publishing alike: a verdict of another version is
 * recomputed instead of reused. Bump it when a rule is added, removed or changes what it finds.
 */
export const SCANNER_VERSION = 'safety-scanner-1';
