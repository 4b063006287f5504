/**
 * A 32-bit FNV-1a hash of a string's UTF-16 code units: what the suggestion model draws from a term or a
 * skill instead of from its position, so that the same text gives the same number in any index.
 */
export function stableHash(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
