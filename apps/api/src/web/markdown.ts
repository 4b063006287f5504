import { Marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml, SafeHtml } from './html.js';

// Skill bodies are untrusted text from strangers' repositories, shown to people who may copy them into an
// agent. marked turns Markdown into HTML (raw HTML included, as Markdown allows), then sanitize-html keeps
// only a strict allow-list: no scripts, styles, iframes, forms, event handlers, inline styles or
// non-http(s)/mailto URLs, and no remote images. The page's Content-Security-Policy is the second fence behind this one.

const ABSOLUTE_URL = /^[a-z][a-z0-9+.-]*:/i;

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    // A remote image would load on every view and tell its host who reads the skill (a tracking pixel), so a
    // Markdown image of another site becomes a link; raw-HTML <img> of another site is dropped by the
    // sanitizer. Only the skill's own files (served here) load inline.
    image({ href, title, text }) {
      const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
      if (ABSOLUTE_URL.test(href) || href.startsWith('//')) {
        return `<a href="${escapeHtml(href)}" title="Remote image, not loaded">[image${text ? `: ${escapeHtml(text)}` : ''}]</a>`;
      }
      return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${titleAttr}>`;
    },
  },
});

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

/** Renders untrusted Markdown to sanitized HTML (allow-listed tags, attributes and URL schemes only). */
export function renderMarkdown(markdown: string, options: MarkdownOptions = {}): SafeHtml {
  const rendered = marked.parse(markdown) as string;
  return new SafeHtml(sanitizeHtml(rendered, sanitizeOptions(options)));
}
