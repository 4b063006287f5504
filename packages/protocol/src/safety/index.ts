// Skill-content safety scanner: pure (no fs, no network), safe to bundle for the browser.
export { SAFETY_RULES, type SafetyRuleInfo } from './rules.js';
export { DESCRIPTION_FILE, scanSkillFiles, scanText, summarizeFlags } from './scan.js';
// The package root also exports the wire-format SafetyFlag (http.ts), which wins there; this alias is how
// the scanner's own flag type is reached from `@atskills/protocol`.
export type { SafetyFlag, SafetyFlag as SafetyScanFlag, SafetyRule, SafetySeverity } from './types.js';
