// Finds the raw lines of the `description` field in a Markdown file's YAML frontmatter, keeping line
// numbers. Hand-written rather than a YAML parse because flags need the exact source lines, and the
// corpus holds descriptions that are invalid YAML (an unquoted `: `) but are still read by agents.

/** One source line of a description, with its 1-based line number in the file. */
export interface DescriptionLine {
  line: number;
  text: string;
}

/** The description's source lines (key line first, value only), or undefined when there is none. */
export function findFrontmatterDescription(lines: readonly string[]): DescriptionLine[] | undefined {
  if (lines.length === 0 || lines[0]!.replace(/^\uFEFF/, '').trimEnd() !== '---') return undefined;
  for (let i = 1; i < lines.length; i++) {
    const text = lines[i]!;
    if (/^(?:---|\.\.\.)\s*$/.test(text)) return undefined;
    const key = /^(["']?)description\1\s*:(.*)$/.exec(text);
    if (!key) continue;
    const found: DescriptionLine[] = [{ line: i + 1, text: key[2]! }];
    // Continuation lines (block scalars, folded plain or quoted scalars) are indented or blank.
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j]!;
      if (/^(?:---|\.\.\.)\s*$/.test(next) || !/^(?:\s|$)/.test(next)) break;
      found.push({ line: j + 1, text: next });
    }
    while (found.length > 1 && found[found.length - 1]!.text.trim() === '') found.pop();
    return found;
  }
  return undefined;
}
