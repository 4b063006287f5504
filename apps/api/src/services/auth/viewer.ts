/** Who is asking: what every read query filters private rows by. */
export interface Viewer {
  userId: number | null;
  /** A hub administrator acting with an admin-scoped token (every namespace); false for their other tokens. */
  isAdmin: boolean;
  scopes: string[];
  /** Private namespaces this caller may read (lowercase). */
  readableNamespaces: string[];
  tokenId: number | null;
  /** The token's user (absent for anonymous callers). */
  userName?: string;
  /** The caller's role per namespace it belongs to (lowercase names); absent for anonymous callers. */
  roles?: Readonly<Record<string, 'owner' | 'publisher' | 'reader'>>;
}

/** The caller without a token: public content only. */
export const ANONYMOUS_VIEWER: Viewer = Object.freeze({
  userId: null,
  isAdmin: false,
  scopes: Object.freeze([]) as unknown as string[],
  readableNamespaces: Object.freeze([]) as unknown as string[],
  tokenId: null,
});
