import type { TreeEntry } from '@atskills/protocol';

/**
 * The listing sorted by path, so the entries under a folder (a contiguous range: they share a prefix) are
 * found by binary search; handing skillFiles only that range keeps a repository of hundreds of skills
 * linear instead of skills x entries.
 */
export class SortedListing {
  private readonly sorted: TreeEntry[];
  constructor(entries: TreeEntry[]) {
    this.sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** The entries under `folder` (all of them for ''). */
  under(folder: string): TreeEntry[] {
    if (folder === '') return this.sorted;
    const prefix = `${folder}/`;
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid]!.path < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: TreeEntry[] = [];
    for (let i = lo; i < this.sorted.length && this.sorted[i]!.path.startsWith(prefix); i++)
      out.push(this.sorted[i]!);
    return out;
  }
}
