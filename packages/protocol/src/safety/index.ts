// Skill-content safety scanner: pure (no fs, no network), safe to bundle for the browser.
export { SAFETY_RULES, type SafetyRuleInfo, SCANNER_VERSION } from './rules.js';
export { DESCRIPTION_FILE, scanSkillFiles, scanText, summarizeFlags } from './scan.js';
export type { SafetyFinding, SafetyRule, SafetySeverity } from './types.js';
