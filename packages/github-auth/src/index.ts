export { AppAccessError, type AppAccessFailure, GithubApp, type InstallationToken } from './github-app.js';
export {
  LinkAccess,
  type LinkAccessCode,
  LinkAccessError,
  type LinkCredentialRow,
  type ReadableRepository,
  tokenContext,
} from './link-credential.js';
export { isRateLimitAnswer } from './rate-limit.js';
export {
  GithubAuthEnvSchema,
  type GithubAuthSettings,
  GithubAuthSettingsError,
  type GithubAuthValues,
  githubAuthFrom,
  loadGithubAuthSettings,
} from './settings.js';
export { type SealedToken, TokenKeyring, TokenKeyringError } from './token-keyring.js';
