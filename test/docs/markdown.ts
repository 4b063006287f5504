/**
 * Just enough Markdown reading for the docs checks: headings and links outside code. A full parser
 * would do, but GitHub's anchors need its own slug rule anyway, and these pages use plain CommonMark.
 */

/** A link found in a page: its target as written and the line it is on. */
export interface MarkdownLink {
  readonly target: string;
  readonly line: number;
}

/** The lines of a page that are not inside a fenced code block, with their 1-based numbers. */
function proseLines(text: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | undefined;
  for (const [i, line] of text.split('\n').entries()) {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    lines.push({ text: line, line: i + 1 });
  }
  return lines;
}

/** A line without its inline code spans (a `[x](y)` inside backticks is not a link). */
function withoutCode(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, '');
}

/**
 * GitHub's anchor for a heading (the rule of github-slugger): the rendered text lower-cased, every
 * character but letters, digits, marks, `_`, `-` and spaces dropped, spaces turned into hyphens.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link renders as its text
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__|\*)/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor GitHub makes for the page's headings (a repeated slug gets `-1`, `-2`, ...). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every inline link and image target of the page, outside code. */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text: line, line: number } of proseLines(text)) {
    for (const match of withoutCode(line).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1] as string, line: number });
    }
  }
  return links;
}
