import { createHash } from 'node:crypto';
import { COPY_BUTTON_SCRIPT } from './copy-button.js';
import { SITE_STYLES } from './styles.js';

/** A static asset served under /assets/ with a content-hashed URL, so it can be cached forever. */
export interface StaticAsset {
  /** The URL pages link to, e.g. `/assets/site.3f2a9c1b.css`. */
  url: string;
  contentType: string;
  body: string;
  etag: string;
}

function asset(name: string, extension: string, contentType: string, body: string): StaticAsset {
  const hash = createHash('sha256').update(body).digest('hex');
  return { url: `/assets/${name}.${hash.slice(0, 10)}.${extension}`, contentType, body, etag: `"${hash}"` };
}

/** The stylesheet. */
export const STYLESHEET = asset('site', 'css', 'text/css; charset=utf-8', SITE_STYLES);
/** The copy-button script (the site's only script). */
export const COPY_SCRIPT = asset('copy', 'js', 'text/javascript; charset=utf-8', COPY_BUTTON_SCRIPT);

/** Every asset, by URL, for the static route. */
export const ASSETS: ReadonlyMap<string, StaticAsset> = new Map(
  [STYLESHEET, COPY_SCRIPT].map((a) => [a.url, a]),
);
