import { ResolveError } from './resolve-error.js';

/**
 * The URL of `route` on the hub at `base`, or a usage error naming the setting and its value when the hub's
 * URL is not an http(s) URL (`ATSKILLS_HUB=notaurl` would otherwise fail as a bare "Invalid URL"). Every
 * request the client makes to a hub takes its URL from here: the resolver's and the hub commands' alike.
 */
export function hubRouteUrl(base: string, route: string): string {
  let url: URL | undefined;
  try {
    url = new URL(`${base}${route}`);
  } catch {
    url = undefined;
  }
  if (url?.protocol === 'http:' || url?.protocol === 'https:') return url.href;
  throw new ResolveError(
    'usage',
    `The hub URL "${base}" (ATSKILLS_HUB, or the hub \`atskills login\` stored) is not an http(s) URL; set it like https://hub.example.org.`,
  );
}
