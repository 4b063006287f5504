// What the page templates need, decoupled from the services' row shapes so pages stay pure functions and can
// be unit-tested without a database; routes/web.ts maps service results onto these.

/** A safety finding as shown on a page (rule, where, and the evidence excerpt). */
export interface FlagView {
  rule: string;
  severity: string;
  message: string;
  file?: string;
  line?: number;
  evidence?: string;
  /** The accepted report that suppressed this flag for this content, if any. */
  suppressedBy?: number;
}

/** One row of the search results. */
export interface SearchResultView {
  kind: 'skill' | 'collection';
  identity: string;
  name: string;
  description: string;
  source: 'gh' | 'hub';
  /** `owner/repo` for gh, `namespace/collection` for hub. */
  repository: string;
  path: string;
  revision?: string;
  stars: number;
  /** Skills only. */
  uses?: UsesView;
  descriptionTokens: number;
  bodyTokens?: number;
  /** For collections: how many skills they hold. */
  skillCount?: number;
  flags: FlagView[];
  warnings: string[];
}

/** The crawl-status box: corpus size and the last crawl. */
export interface CrawlStatusView {
  skills: number;
  repositories?: number;
  collections?: number;
  lastCrawlAt: Date | string | null;
  lastCrawlStatus?: string | null;
}

export interface SearchFilters {
  source?: 'gh' | 'hub';
  owner?: string;
  repo?: string;
  namespace?: string;
}

/** The home page: the search form, optionally results or an input problem, and the crawl status. */
export interface SearchPageModel {
  query: string;
  filters: SearchFilters;
  limit?: number;
  /** Undefined when no search was made (empty query). */
  results?: SearchResultView[];
  nextCursor?: string | null;
  /** Whether this page continues an earlier one (a cursor was given). */
  continued?: boolean;
  /** Query words the engine read as others (typo -> word). */
  corrected?: Record<string, string>;
  /** Query words that took no part. */
  ignored?: string[];
  /** A problem with the query (too long, bad cursor) to show instead of results. */
  error?: string;
  status: CrawlStatusView | null;
  /** The browse lists of the home page (no query, a non-empty index). */
  browse?: HomeBrowseView;
}

export interface SkillFileView {
  path: string;
  size: number;
  sha256: string;
}

/** A skill at /s/<identity>. */
export interface SkillPageModel {
  /** The hub's public URL, for the client install line. */
  hubUrl?: string;
  identity: string;
  revision: string;
  /** Set when the page shows a pinned revision (?rev=). */
  pinned?: boolean;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  files: SkillFileView[];
  flags: FlagView[];
  warnings: string[];
  stars?: number;
  /** Distinct clients that resolved it: last 7 days and all time (/about/metrics). */
  uses?: UsesView;
  descriptionTokens?: number;
  bodyTokens?: number;
  lastSeen?: Date | string | null;
  /** Stored revisions, newest first (the current one included). */
  history?: RevisionView[];
}

/** Weekly and all-time uses of a skill. */
export interface UsesView {
  week: number;
  total: number;
}

export interface MenuItemView {
  identity: string;
  name: string;
  description: string;
  flags?: FlagView[];
}

/** A folder without SKILL.md at /s/<identity>: one line per skill beneath it. */
export interface MenuPageModel {
  /** The hub's public URL, for the client install line. */
  hubUrl?: string;
  identity: string;
  revision: string;
  items: MenuItemView[];
}

export interface SubcollectionView {
  path: string;
  identity?: string;
  skills: number;
}

/** A helpful error page (400 bad identity, 404, 410 gone, 422 over cap, 5xx). */
export interface ErrorPageModel {
  status: number;
  code: string;
  title: string;
  detail?: string;
  /** For a bad identity: which rule it broke (the core's IdentityError code). */
  reason?: string;
  identity?: string;
  lastRevision?: string;
  lastSeen?: Date | string | null;
  count?: number;
  subcollections?: SubcollectionView[];
  requestId?: string;
  /** No page lives at the URL (no route took it): the advice says where the pages are. */
  noRoute?: boolean;
}

/** A gh owner or hub namespace in a browse list. */
export interface OwnerLinkView {
  source: 'gh' | 'hub';
  owner: string;
  /** Repositories (gh) or collections (hub). */
  containers: number;
  skills: number;
}

/** A repository or hub collection in a browse list. */
export interface ContainerLinkView {
  source: 'gh' | 'hub';
  owner: string;
  container: string;
  skills: number;
  updatedAt: Date | string;
}

/** A skill in a browse list (most used, recently added or updated). */
export interface SkillLinkView {
  identity: string;
  name: string;
  description: string;
  firstSeenAt: Date | string;
  updatedAt: Date | string;
  /** Uses in the last 7 days, in the most-used list. */
  weekUses?: number;
}

/** What the home page lists without a query. */
export interface HomeBrowseView {
  owners: OwnerLinkView[];
  repositories: ContainerLinkView[];
  collections: ContainerLinkView[];
  mostUsed: SkillLinkView[];
  added: SkillLinkView[];
  updated: SkillLinkView[];
}

/** /o/<owner> (gh) or /n/<namespace> (hub). */
export interface OwnerPageModel {
  source: 'gh' | 'hub';
  owner: string;
  skills: number;
  /** Repositories or collections in all (the list may be cut short). */
  containerCount: number;
  containers: ContainerLinkView[];
  updated: SkillLinkView[];
}

/** One stored revision of a skill on its page. */
export interface RevisionView {
  revision: string;
  /** Whether this is the skill's current revision. */
  current: boolean;
  commit: string | null;
  createdAt: Date | string;
}
