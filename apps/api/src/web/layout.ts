import { COPY_SCRIPT, STYLESHEET } from './assets/index.js';
import { html, type SafeHtml } from './html.js';

/**
 * Sent with every page: only the self-hosted stylesheet and copy script may load; no inline script or style,
 * no plugins, no frames, forms submit only here, images only from here (remote images in skills are shown as links). This is the second fence
 * behind the Markdown sanitizer, so even a sanitizer miss cannot run script.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

export interface LayoutOptions {
  title: string;
  /** Tells robots not to index the page (error pages, pinned revisions). */
  noindex?: boolean;
  /** Atom feeds of what the page lists (`<link rel="alternate">`). */
  feeds?: readonly { title: string; href: string }[];
}

/** Wraps a page body in the site chrome: head, header with a search box, footer. */
export function layout(options: LayoutOptions, body: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="strict-origin-when-cross-origin">
${options.noindex ? html`<meta name="robots" content="noindex">` : ''}
<title>${options.title} · @skills hub</title>
<link rel="stylesheet" href="${STYLESHEET.url}">
${(options.feeds ?? []).map(
  (f) => html`<link rel="alternate" type="application/atom+xml" title="${f.title}" href="${f.href}">
`,
)}
<script src="${COPY_SCRIPT.url}" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site">
<a class="brand" href="/">@skills hub</a>
<nav aria-label="Site"><a href="/">Browse</a><a href="/suggest">Describe your task</a><a href="/feed.xml">Feed</a><a href="/docs">API docs</a><a href="/openapi.json">OpenAPI</a></nav>
</header>
<main id="main" tabindex="-1">
${body}
</main>
<footer class="site">
Reference any skill in a message with <code>@skills:&lt;identity&gt;</code>; add <code>:save</code> to keep a copy in
<code>.atskills/</code>, <code>:install</code> to load it at every session start.
</footer>
</body>
</html>
`;
}
