/**
 * Version of the verdicts cached in safety_verdicts (under a skill's content hash, see
 * `skillContentHash` in `@atskills/protocol/content`): bump it when the scanner's rules change so cached
 * verdicts are recomputed instead of reused.
 */
export const SCANNER_VERSION = 'safety-scanner-1';
