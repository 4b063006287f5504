// Small display formatters shared by the pages.

const integer = new Intl.NumberFormat('en-US');

/** 1234567 -> "1,234,567". */
export function formatCount(n: number): string {
  return integer.format(n);
}

/** A byte size for people: "912 B", "4.2 KiB", "1.3 MiB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** A date as YYYY-MM-DD (UTC), or null for absent or unparsable input. */
export function formatDate(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return null;
  return date.toISOString().slice(0, 10);
}

/** A timestamp as "YYYY-MM-DD HH:MM UTC". */
export function formatDateTime(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return null;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The first 12 characters of a revision, enough to tell revisions apart on a page. */
export function shortRevision(revision: string): string {
  return revision.length > 12 ? revision.slice(0, 12) : revision;
}

/** Quotes a word for a POSIX shell so a CLI example can be pasted as is. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9@%_+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
