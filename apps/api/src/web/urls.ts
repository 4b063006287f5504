import { parseIdentity } from '@atskills/protocol';

// Links between pages. Identity paths may hold spaces, '#', '?', '@', CJK and colons, so each segment is
// percent-encoded; the /s/ route percent-decodes exactly once through parseIdentity, which turns the link
// back into the same canonical identity.

/** `/s/gh:o/r/p` for a canonical identity, each path segment percent-encoded. */
export function skillPageUrl(identity: string, query?: Record<string, string | undefined>): string {
  const { source, path } = parseIdentity(identity);
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  const prefix = source === 'local' ? '' : `${source}:`;
  return `/s/${prefix}${encoded}${queryString(query)}`;
}

/** `/r/<owner>/<repo>`: a GitHub repository's index status page. */
export function repositoryPageUrl(owner: string, repo: string): string {
  return `/r/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
}

/** `/v1/files/<identity>?path=<file>`: one file of a skill, served by the API. */
export function skillFileUrl(identity: string, filePath: string): string {
  const { source, path } = parseIdentity(identity);
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return `/v1/files/${source}:${encoded}${queryString({ path: filePath })}`;
}

/** The GitHub page of a `gh:` identity's folder (default branch), for the outbound source link. */
export function githubUrl(owner: string, repo: string, subpath = ''): string {
  const base = `https://github.com/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  if (subpath === '') return base;
  return `${base}/tree/HEAD/${subpath.split('/').map(encodeURIComponent).join('/')}`;
}

/** `?a=1&b=2` from the defined entries, or '' when there are none. */
export function queryString(query: Record<string, string | number | undefined> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** `/badge/gh:o/r/p.svg`: the README badge of a skill. */
export function badgeUrl(identity: string): string {
  return `${skillPageUrl(identity).replace(/^\/s\//, '/badge/')}.svg`;
}

/** `/o/<owner>` for a GitHub owner, `/n/<namespace>` for a hub namespace. */
export function ownerPageUrl(source: 'gh' | 'hub', owner: string): string {
  return `/${source === 'gh' ? 'o' : 'n'}/${encodeURIComponent(owner)}`;
}

/** The Atom feed of an owner's or namespace's public skills. */
export function ownerFeedUrl(source: 'gh' | 'hub', owner: string): string {
  return `${ownerPageUrl(source, owner)}/feed.xml`;
}

/** The page of a repository or hub collection: its menu at `/s/gh:o/r` or `/s/hub:ns/c`. */
export function containerPageUrl(source: 'gh' | 'hub', owner: string, container: string): string {
  return skillPageUrl(`${source}:${owner}/${container}`);
}
