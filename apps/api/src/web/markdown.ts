import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml, SafeHtml } from './html.js';

// Skill bodies are untrusted text from strangers' repositories, shown to people who may copy them into an
// agent. markdown-it turns Markdown into HTML (raw HTML included, as Markdown allows), then sanitize-html keeps
// only a strict allow-list: no scripts, styles, iframes, forms, event handlers, inline styles or
// non-http(s)/mailto URLs, and no remote images. The page's Content-Security-Policy is the second fence behind this one.
// markdown-it, not marked: marked took time quadratic in a run of emphasis delimiters (100 KB of `_a`
// held the event loop 12.8 s, of `*a` 3 s) and overflowed the stack on deep quotes and lists (2,000 nested
// list items: 92 s, then a 500), on a page anyone may open for any public skill; markdown-it renders each of
// those in 0.05-0.3 s and caps nesting (docs/security.md).

const ABSOLUTE_URL = /^[a-z][a-z0-9+.-]*:/i;

// GitHub's flavour: tables and strikethrough are on by default; bare URLs become links.
const markdownRenderer = new MarkdownIt({ html: true, linkify: true, breaks: false });

// A remote image would load on every view and tell its host who reads the skill (a tracking pixel), so a
// Markdown image of another site becomes a link; raw-HTML <img> of another site is dropped by the
// sanitizer. Only the skill's own files (served here) load inline.
markdownRenderer.renderer.rules.image = (tokens, index) => {
  const token = tokens[index]!;
  const href = String(token.attrGet('src') ?? '');
  const title = String(token.attrGet('title') ?? '');
  const text = markdownRenderer.renderer.renderInlineAsText(
    token.children ?? [],
    markdownRenderer.options,
    {},
  );
  if (ABSOLUTE_URL.test(href) || href.startsWith('//')) {
    return `<a href="${escapeHtml(href)}" title="Remote image, not loaded">[image${text ? `: ${escapeHtml(text)}` : ''}]</a>`;
  }
  const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
  return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${titleAttr}>`;
};

/** Maps a link or image target written relative to the skill folder to a URL on this site, or null to drop it. */
export type RelativeLinkResolver = (relativePath: string, kind: 'link' | 'image') => string | null;

export interface MarkdownOptions {
  resolveRelative?: RelativeLinkResolver;
}

function rewriteTarget(
  value: string | undefined,
  kind: 'link' | 'image',
  resolve: RelativeLinkResolver | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  const target = value.trim();
  if (target === '' || ABSOLUTE_URL.test(target) || target.startsWith('//')) return target;
  if (kind === 'link' && target.startsWith('#')) return target;
  // A path relative to the skill folder would otherwise resolve against this page's URL, which is wrong.
  return resolve?.(target, kind) ?? undefined;
}

function sanitizeOptions(options: MarkdownOptions): sanitizeHtml.IOptions {
  return {
    allowedTags: [
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'p',
      'br',
      'hr',
      'blockquote',
      'pre',
      'code',
      'em',
      'strong',
      'del',
      's',
      'kbd',
      'sup',
      'sub',
      'ul',
      'ol',
      'li',
      'a',
      'img',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
      'details',
      'summary',
    ],
    allowedAttributes: {
      a: ['href', 'title', 'rel'],
      img: ['src', 'alt', 'title'],
      code: ['class'],
      th: ['align'],
      td: ['align'],
      ol: ['start'],
    },
    allowedClasses: { code: ['language-*'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    // Images that stay images are the skill's own files, served from this site (relative URLs only).
    allowedSchemesByTag: { img: [] },
    allowProtocolRelative: false,
    allowedSchemesAppliedToAttributes: ['href', 'src'],
    disallowedTagsMode: 'discard',
    // An image whose source was dropped would only show a broken-image icon.
    exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
    transformTags: {
      a: (tagName, attribs) => {
        const href = rewriteTarget(attribs.href, 'link', options.resolveRelative);
        const out: sanitizeHtml.Attributes = { rel: 'nofollow noopener noreferrer' };
        if (href !== undefined) out.href = href;
        if (attribs.title !== undefined) out.title = attribs.title;
        return { tagName, attribs: out };
      },
      img: (tagName, attribs) => {
        const src = rewriteTarget(attribs.src, 'image', options.resolveRelative);
        const out: sanitizeHtml.Attributes = { alt: attribs.alt ?? '' };
        if (src !== undefined) out.src = src;
        if (attribs.title !== undefined) out.title = attribs.title;
        return { tagName, attribs: out };
      },
    },
  };
}

/**
 * Characters of a body rendered as Markdown; the rest is shown as plain text. The largest SKILL.md of the
 * shared corpus is 74 KB; a body may be 1 MiB, and rendering takes up to 0.5 s for 100 KB of hostile
 * Markdown (tables, links) on the event loop of a page anyone may open.
 */
export const MAX_RENDERED_MARKDOWN = 128 * 1024;

/**
 * Renders untrusted Markdown to sanitized HTML (allow-listed tags, attributes and URL schemes only): the
 * first MAX_RENDERED_MARKDOWN characters (to the end of a line), then the rest as escaped plain text.
 */
export function renderMarkdown(markdown: string, options: MarkdownOptions = {}): SafeHtml {
  let rendered = markdown;
  let rest = '';
  if (markdown.length > MAX_RENDERED_MARKDOWN) {
    const lineEnd = markdown.lastIndexOf('\n', MAX_RENDERED_MARKDOWN);
    const cut = lineEnd > 0 ? lineEnd + 1 : MAX_RENDERED_MARKDOWN;
    rendered = markdown.slice(0, cut);
    rest = markdown.slice(cut);
  }
  const html = sanitizeHtml(markdownRenderer.render(rendered), sanitizeOptions(options));
  if (rest === '') return new SafeHtml(html);
  const note = `<p class="notice">The rest of this file (${rest.length.toLocaleString('en')} characters) is shown as plain text: only the first ${MAX_RENDERED_MARKDOWN.toLocaleString('en')} are rendered.</p>`;
  return new SafeHtml(`${html}\n${note}\n<pre>${escapeHtml(rest)}</pre>`);
}
