// The public API of @atskills/db, named one by one: the family files also hold the steps of the long
// transactions (functions taking the transaction handle), which stay inside the package.
export * from './change-feed.js';
export * from './client.js';
export * from './embedded-lock.js';
export { loggableError, loggableMessage } from './loggable-error.js';
export * from './migrate.js';
export { describeDatabaseFailure, isDatabaseOutage, rootMessage } from './outage.js';
export * from './process-lock.js';
export { batches, uniqueBy } from './repositories/batches.js';
export {
  cachedSafetyVerdicts,
  existingBlobHashes,
  findSafetyVerdict,
  readBlobs,
  storeBlobs,
} from './repositories/blobs.js';
export {
  type BrowseFilter,
  type ContainerSummary,
  corpusStats,
  findOwner,
  type HubSkillEntry,
  listContainers,
  listHubSkillEntries,
  listMostUsedSkills,
  listOwners,
  listRecentSkills,
  type OwnerSummary,
  type SkillSummary,
} from './repositories/browse.js';
export {
  type CollectionRow,
  findCollection,
  insertCollectionRevision,
  listCollectionRevisions,
  popularPublicCollections,
  saveCollectionRow,
} from './repositories/collections.js';
export { type CrawlStatus, crawlStatus } from './repositories/crawl-status.js';
export {
  type CrawlOutcome,
  type CrawlRunKind,
  type CrawlRunProgress,
  crawlJobKey,
  crawlOutcomeTotals,
  crawlReportExists,
  crawlReportsOfRun,
  crawlRunChangedIndex,
  crawlRunProgress,
  createCrawlRun,
  failInterruptedRuns,
  failOrphanedRuns,
  finishCompletedRuns,
  finishCrawlRun,
  type ReportEntry,
  recentCrawlRuns,
  setCrawlRunTotal,
} from './repositories/crawls.js';
export {
  abandonIndexRequest,
  attachIndexRequestRun,
  dropIndexRequest,
  findRepositoryRedirect,
  forgetWebhookDelivery,
  type IndexRequestOrigin,
  openIndexRequest,
  recordWebhookDelivery,
  requestIndexing,
  setWebhookDeliveryOutcome,
} from './repositories/indexing.js';
export {
  decideInvitation,
  findPendingInvitation,
  type InvitationRow,
  type InvitationView,
  listPendingInvitations,
  upsertInvitation,
  withdrawInvitations,
} from './repositories/invitations.js';
export {
  claimLinksDue,
  deleteLink,
  findLinkById,
  findLinkOfCollection,
  insertLink,
  type LinkedSkill,
  type LinkIndexWrite,
  type LinkRow,
  type LinkWithNames,
  linksOfInstallation,
  linksOfRepository,
  linksSealedWithOtherKeys,
  listLinks,
  markLinkFailed,
  type NewLink,
  recordLinkFailure,
  renameLinkedRepository,
  setLinkInstallation,
  setLinkRepositoryId,
  setLinkStatus,
  updateLinkSealedToken,
  writeLinkIndex,
} from './repositories/links.js';
export {
  markCollectionDeleted,
  type PublishedSkill,
  type PublishOutcome,
  type PublishWrite,
  writePublish,
} from './repositories/publish.js';
export {
  allRepositoryNames,
  currentRepositoryName,
  ensureRepository,
  failedRepositories,
  findOtherRepositoryWithGithubId,
  findRepositoryWithReport,
  type IndexStatus,
  jobRepository,
  type RepositoryMetadata,
  type RepositoryStatus,
  recentlyUnfound,
  repositoryForEvent,
  repositoryStatus,
  repositoryWentPrivate,
  startRepositoryJob,
} from './repositories/repositories.js';
export {
  type RepositoryIndexResult,
  type RepositoryIndexWrite,
  RepositoryVanishedError,
  type UnchangedReportResult,
  type UnchangedReportWrite,
  writeRepositoryIndex,
  writeUnchangedReports,
} from './repositories/repository-index.js';
export {
  markRepositoryUnavailable,
  moveRepository,
  pruneUnfoundRepositories,
  type RepositoryMove,
} from './repositories/repository-lifecycle.js';
export {
  claimDueRepositories,
  type RepositoryActivityRow,
  setNextCrawlDates,
  unscheduledRepositories,
} from './repositories/repository-schedule.js';
export {
  addReportedFlag,
  contentVerdictsFor,
  countReportsSince,
  decideSkillReport,
  findSkillReport,
  insertSkillReport,
  listSkillReports,
  lockReporter,
  REPORTED_MALICIOUS_RULE,
  reportedMaliciousFlag,
  type SkillReportRow,
  type SkillReportView,
  suppressFlag,
  suppressionsFor,
  withContentVerdict,
} from './repositories/safety-reports.js';
export { PUBLIC_SCOPE, type ReadScope, visibleTo } from './repositories/scope.js';
export {
  type ChangedSkill,
  type ChangeMark,
  changedSkills,
  countSearchDocuments,
  currentChangeMark,
  liveSkillIdentities,
  loadSearchDocuments,
  loadSearchDocumentsById,
  loadSearchFolders,
  loadSkillUses,
  queryWords,
  recentlyLeftIdentities,
  refreshSearchStatistics,
  type SearchDocumentRow,
  type SearchFiltersInput,
  type SearchFolderRow,
  type SearchKeyset,
  type SearchRow,
  type SearchSkillsInput,
  type SkillChanges,
  searchSkills,
  USES_STAR_WEIGHT,
} from './repositories/search.js';
export type { SkillRevisionContent } from './repositories/skills/content.js';
export { type SeenSkill, storedSkillRevisions } from './repositories/skills/gh.js';
export {
  type HubCollectionTarget,
  type HubSkillWrite,
  LINK_STALE_WARNING,
  markHubSkillsGone,
  storedLinkedSkills,
  upsertHubSkills,
} from './repositories/skills/hub.js';
export {
  findLiveSkillRevision,
  findLiveSkillSummaries,
  findSkillAt,
  findSkillFindings,
  findSkillRevision,
  type LiveSkillSummary,
  listContainerSkills,
  listSkillContainers,
  listSkillRevisions,
  listSkillsAtOrUnder,
  type SkillListing,
  type SkillLocation,
  type SkillRevisionEntry,
  type SkillRow,
  skillIdsByIdentity,
} from './repositories/skills/lookups.js';
export {
  deleteModelSnapshot,
  type ModelSnapshotHeader,
  modelSnapshotHeader,
  modelSnapshotPart,
  saveModelSnapshot,
} from './repositories/snapshots.js';
export {
  type AuditEntry,
  type AuditRow,
  appendAudit,
  countOwners,
  createTeamNamespace,
  createUserWithNamespace,
  findNamespace,
  findNamespaceById,
  findRole,
  findTokenByHash,
  findTokenById,
  findUserById,
  findUserByName,
  insertToken,
  listAudit,
  listMembers,
  listTokensOfUser,
  listUsers,
  type NamespaceRow,
  namespacesOfUser,
  type Role,
  removeMembership,
  revokeTokenRow,
  setMembership,
  type TokenRow,
  tokenCounts,
  touchToken,
  type UserRow,
} from './repositories/teams.js';
export { recordUseMarks, type SkillUses, storeDailyUses, usesOfIdentities } from './repositories/uses.js';
export * from './schema/index.js';
