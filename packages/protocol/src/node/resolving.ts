// The start-up entry of a resolving client (`@atskills/protocol/node/resolving`): the resolver and what it
// needs to be built, without the rest of the node half (save, install, git, tar). A bundler that code-splits
// the client loads only these modules (and what they import) for `atskills get`; the `./node` barrel would
// bring every module it re-exports.

export { SUGGEST_TIMEOUT_HEADER } from '../suggest-timeout.js';
export { isMissing } from './fs-tree.js';
export { httpRequest } from './http-request.js';
export { findProjectDir } from './project.js';
export { type Origin, type Resolved, type ResolvedMenu, type ResolvedSkill, Resolver } from './resolver.js';
export {
  type ClientSettings,
  configFileFrom,
  DEFAULT_SUGGEST_LIMIT,
  loadSettings,
  type StoredConfig,
} from './settings.js';
