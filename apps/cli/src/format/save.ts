import type { SaveOutcome, VersionFile } from '@atskills/protocol/node';

/** Human text for a save's outcome; for `merge`, both versions file by file for the agent to merge. */
export function renderSaveOutcome(o: SaveOutcome): string {
  const rev = shortRev(o.revision);
  switch (o.action) {
    case 'saved':
      return `Saved ${o.identity} at ${rev} to ${o.dir}`;
    case 'refreshed':
      return `Refreshed ${o.identity} to ${rev} in ${o.dir}`;
    case 'up-to-date':
      return `${o.identity} is up to date (${rev}) in ${o.dir}`;
    case 'kept':
      return `Kept the edited copy in ${o.dir} (${o.conflict?.reason}); nothing changed.`;
    case 'overwritten':
      return `Overwrote ${o.dir} with ${o.identity} at ${rev} (${o.conflict?.reason}).`;
    case 'merge':
      return [
        `Conflict: ${o.dir} ${o.conflict?.reason}. Nothing was changed.`,
        `Merge the two versions below into ${o.dir} (it is an ordinary project folder); to take upstream as is instead, run`,
        `\`atskills save --on-conflict refetch ${o.identity}\`.`,
        '',
        `=== local copy (${o.dir}) ===`,
        ...renderFiles(o.merge?.local ?? []),
        `=== upstream ${o.identity} at ${shortRev(o.latestRevision)} ===`,
        ...renderFiles(o.merge?.upstream ?? []),
      ].join('\n');
  }
}

function renderFiles(files: VersionFile[]): string[] {
  return files.flatMap((f) =>
    f.text === undefined
      ? [`--- ${f.path} (binary, ${f.size} bytes)`]
      : [`--- ${f.path}`, f.text.replace(/\n$/, '')],
  );
}

/** A revision for people: 12 hex digits of a sha, anything else as it is. */
export function shortRev(revision: string): string {
  return /^[0-9a-f]{40,64}$/.test(revision) ? revision.slice(0, 12) : revision;
}
