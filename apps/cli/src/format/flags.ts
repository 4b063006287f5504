/**
 * How the CLI names the safety flags that hold on a listed skill (`atskills search`, `atskills suggest`, the
 * hook's suggestions): nothing when there are none, else `[flagged: a, b]` after `gap`.
 */
export function flaggedNote(codes: readonly string[], gap = '  '): string {
  return codes.length > 0 ? `${gap}[flagged: ${codes.join(', ')}]` : '';
}
