import { parseIdentity, trimTrailingSlashes } from '@atskills/protocol';
import { html } from './html.js';
import { skillPageUrl } from './urls.js';

// Atom (RFC 4287) feeds of new and updated public skills. Written with the escaping `html` tag: its escapes
// (&amp; &lt; &gt; &quot; &#39; &#96;) are valid XML too, and XML 1.0 forbids most control characters,
// which are dropped from text first. No feed library: the format is five elements and one template.

/** One skill in a feed. */
export interface FeedEntryView {
  identity: string;
  name: string;
  description: string;
  revision: string;
  firstSeenAt: Date;
  updatedAt: Date;
}

export interface FeedModel {
  /** The hub's public URL (feeds are read elsewhere, so every link is absolute). */
  hubUrl: string;
  /** The feed's own path, e.g. `/feed.xml` or `/o/acme/feed.xml`. */
  selfPath: string;
  /** The page the feed follows, e.g. `/` or `/o/acme`. */
  pagePath: string;
  title: string;
  entries: readonly FeedEntryView[];
}

/** Characters XML 1.0 does not allow, even as references. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

function text(value: string): string {
  return value.replace(NOT_XML, '');
}

/** An Atom feed document; its `updated` is the newest entry's, so an unchanged index gives identical bytes. */
export function renderFeed(model: FeedModel): string {
  const base = trimTrailingSlashes(model.hubUrl);
  const newest = model.entries.reduce((max, e) => Math.max(max, e.updatedAt.getTime()), 0);
  return html`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${base}${model.selfPath}</id>
<title>${text(model.title)}</title>
<updated>${new Date(newest).toISOString()}</updated>
<link rel="self" type="application/atom+xml" href="${base}${model.selfPath}"/>
<link rel="alternate" type="text/html" href="${base}${model.pagePath}"/>
<author><name>@skills hub</name><uri>${base}/</uri></author>
<generator>@skills hub</generator>
${model.entries.map((e) => {
  const page = `${base}${skillPageUrl(e.identity)}`;
  // One entry id per revision: a reader shows an update as a new item instead of silently replacing the old.
  return html`<entry>
<id>${page}?rev=${encodeURIComponent(e.revision)}</id>
<title>${text(e.name || e.identity)}</title>
<link rel="alternate" type="text/html" href="${page}"/>
<published>${e.firstSeenAt.toISOString()}</published>
<updated>${e.updatedAt.toISOString()}</updated>
<summary>${text(`${e.description}${e.description ? ' ' : ''}(@skills:${e.identity})`)}</summary>
<category term="${parseIdentity(e.identity).source}"/>
</entry>
`;
})}</feed>
`.value;
}
