/** Shows a path from an archive in a message: quoted, with control characters escaped, cut when huge. */
export function showPath(path: string): string {
  const escaped = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}...` : path);
  return escaped;
}
