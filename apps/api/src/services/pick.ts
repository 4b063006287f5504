/**
 * The named fields of `source`, typed by them: how a view is derived from a resolved type instead of
 * copying fields one by one (a field added to the view's key list cannot be forgotten in a mapper).
 */
export function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = source[key];
  return out;
}
