// Finding the frontmatter block needs no YAML parser: this module is what a start-up path may load (the
// resolver serving a cached skill whose name and description are already known) without pulling in yaml.

/** The line that opens the frontmatter (the first line of the file). */
export const FRONTMATTER_OPENING = /^---[ \t]*\r?\n/;
/** The line that closes it. */
export const FRONTMATTER_CLOSING = /^---[ \t]*(?:\r?\n|$)/m;

/** A SKILL.md cut at its frontmatter: the YAML text between the `---` lines and the body after them. */
export interface FrontmatterParts {
  yamlText: string;
  body: string;
}

/** Cuts a SKILL.md's text (BOM already removed) at its frontmatter; undefined when none opens or closes. */
export function splitFrontmatter(text: string): FrontmatterParts | undefined {
  const opening = FRONTMATTER_OPENING.exec(text);
  if (!opening) return undefined;
  const rest = text.slice(opening[0].length);
  const closing = FRONTMATTER_CLOSING.exec(rest);
  if (!closing) return undefined;
  return {
    yamlText: rest.slice(0, closing.index),
    body: rest.slice(closing.index + closing[0].length),
  };
}
