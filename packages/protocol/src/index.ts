export * from './autotrigger.js';
export * from './cursor.js';
export * from './errors.js';
export * from './frontmatter.js';
export * from './http.js';
// http.ts and safety/ both define SafetyFlag: the root keeps the wire shape; the scanner's is SafetyScanFlag.
export { SafetyFlag } from './http.js';
export * from './identity.js';
export * from './leaf-rule.js';
export * from './menu.js';
export * from './references.js';
export * from './resident-block.js';
export * from './safety/index.js';
export * from './source-stamp.js';
