import { problem } from '../../problems.js';

// Like GitHub logins: 1-39 lowercase letters, digits and single inner hyphens.
const ACCOUNT_NAME = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$/;
// Like repository names, lowercase (hub identities fold case): letters, digits, '.', '_', '-'.
const COLLECTION_NAME = /^[a-z0-9](?:[a-z0-9._-]{0,98}[a-z0-9])?$/;
/** Names that would read as something else in URLs, identities or the admin tooling. */
const RESERVED = new Set([
  'admin',
  'api',
  'hub',
  'gh',
  'local',
  'root',
  'system',
  'v1',
  'search',
  'docs',
  'static',
]);

/** Checks a user or team name (which is also its namespace) and returns it lowercased; 400 `invalid-name`. */
export function checkAccountName(raw: string, what: 'user' | 'team' | 'namespace'): string {
  const name = raw.trim().toLowerCase();
  if (!ACCOUNT_NAME.test(name)) {
    throw problem(
      'invalid-name',
      `A ${what} name is 1-39 lowercase letters, digits and single hyphens (not at either end); got ${JSON.stringify(raw.slice(0, 80))}.`,
    );
  }
  if (RESERVED.has(name) && what !== 'namespace') {
    throw problem('invalid-name', `"${name}" is reserved; choose another ${what} name.`);
  }
  return name;
}

/** Checks a collection name and returns it lowercased; 400 `invalid-name`. */
export function checkCollectionName(raw: string): string {
  const name = raw.trim().toLowerCase();
  if (!COLLECTION_NAME.test(name)) {
    throw problem(
      'invalid-name',
      `A collection name is 1-100 lowercase letters, digits, ".", "_" and "-", starting and ending with a letter or digit; got ${JSON.stringify(raw.slice(0, 120))}.`,
    );
  }
  return name;
}
