import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** One key of LINK_TOKEN_KEYS: `<id>:<base64 of 32 bytes>`. */
const KEY_ENTRY = /^([a-z0-9][a-z0-9_-]{0,31}):([A-Za-z0-9+/=_-]+)$/;

/**
 * The environment variables of linked private repositories, shared by the API and the crawler (key
 * rotation: put a new key first in LINK_TOKEN_KEYS, run `hub admin rotate-link-keys`, then drop the old one).
 */
export const GithubAuthEnvSchema = z.object({
  GITHUB_APP_ID: optionalText.describe(
    "The numeric id of the hub's GitHub App, for linked repositories; set with GITHUB_APP_PRIVATE_KEY or not at all.",
  ),
  GITHUB_APP_PRIVATE_KEY: optionalText.describe(
    "The GitHub App's private key (PEM; `\\n` escapes allowed on one line); without the App, App links are refused.",
  ),
  GITHUB_APP_SLUG: optionalText.describe("The App's URL name, for the install link the CLI prints."),
  GITHUB_APP_WEBHOOK_SECRET: optionalText.describe(
    "The App's webhook secret (16 characters or more); unset, `/v1/webhooks/github-app` answers 503.",
  ),
  LINK_TOKEN_KEYS: optionalText.describe(
    "Keys that seal linked repositories' tokens: `<id>:<base64 of 32 bytes>`, comma-separated; the first seals, all open. Unset, token links are refused (`422 link-not-configured`).",
  ),
});

/** The parsed settings; every field is absent when the feature is not configured. */
export interface GithubAuthSettings {
  readonly app: {
    readonly appId: string;
    readonly privateKey: string;
    readonly slug: string | undefined;
    readonly webhookSecret: string | undefined;
  } | null;
  /** Encryption keys by id, the current (encrypting) one first. */
  readonly tokenKeys: readonly { readonly id: string; readonly key: Buffer }[];
}

/** Raised for a bad setting; the message names the variable. */
export class GithubAuthSettingsError extends Error {
  override name = 'GithubAuthSettingsError';
}

/** The variables of GithubAuthEnvSchema as parsed (a process's composed schema spreads its shape). */
export type GithubAuthValues = z.output<typeof GithubAuthEnvSchema>;

/** Parses and checks the settings (fails fast naming the variable); keys are never echoed. */
export function loadGithubAuthSettings(env: Record<string, string | undefined>): GithubAuthSettings {
  const parsed = GithubAuthEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new GithubAuthSettingsError(
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    );
  }
  return githubAuthFrom(parsed.data);
}

/**
 * Checks variables a process has already parsed (its schema spreads GithubAuthEnvSchema's shape) and builds
 * the settings from them, so a process parses them once; fails naming the variable, keys never echoed.
 */
export function githubAuthFrom(e: GithubAuthValues): GithubAuthSettings {
  let app: GithubAuthSettings['app'] = null;
  if (e.GITHUB_APP_ID !== undefined || e.GITHUB_APP_PRIVATE_KEY !== undefined) {
    if (!e.GITHUB_APP_ID || !/^\d+$/.test(e.GITHUB_APP_ID)) {
      throw new GithubAuthSettingsError(
        'GITHUB_APP_ID: the numeric id of the GitHub App (set with GITHUB_APP_PRIVATE_KEY)',
      );
    }
    if (!e.GITHUB_APP_PRIVATE_KEY) {
      throw new GithubAuthSettingsError('GITHUB_APP_PRIVATE_KEY: the App private key (PEM) is missing');
    }
    const privateKey = e.GITHUB_APP_PRIVATE_KEY.replace(/\\n/g, '\n');
    try {
      const key = createPrivateKey(privateKey);
      if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
    } catch {
      throw new GithubAuthSettingsError('GITHUB_APP_PRIVATE_KEY: not an RSA private key in PEM form');
    }
    if (e.GITHUB_APP_WEBHOOK_SECRET !== undefined && e.GITHUB_APP_WEBHOOK_SECRET.length < 16) {
      throw new GithubAuthSettingsError('GITHUB_APP_WEBHOOK_SECRET: use at least 16 characters');
    }
    app = Object.freeze({
      appId: e.GITHUB_APP_ID,
      privateKey,
      slug: e.GITHUB_APP_SLUG,
      webhookSecret: e.GITHUB_APP_WEBHOOK_SECRET,
    });
  }
  if (!app) {
    // The App's webhook and install link name an App this hub does not have: say so now, not at the first delivery.
    for (const name of ['GITHUB_APP_WEBHOOK_SECRET', 'GITHUB_APP_SLUG'] as const) {
      if (e[name] !== undefined) {
        throw new GithubAuthSettingsError(
          `${name}: set with GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY, or not at all`,
        );
      }
    }
  }
  const tokenKeys: { id: string; key: Buffer }[] = [];
  for (const [i, raw] of (e.LINK_TOKEN_KEYS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .entries()) {
    const match = KEY_ENTRY.exec(raw);
    const key = match ? Buffer.from(match[2] ?? '', 'base64') : Buffer.alloc(0);
    if (!match || key.length !== 32) {
      throw new GithubAuthSettingsError(
        `LINK_TOKEN_KEYS: entry ${i + 1} must be <id>:<base64 of 32 random bytes> (e.g. k1:$(openssl rand -base64 32))`,
      );
    }
    if (tokenKeys.some((k) => k.id === match[1])) {
      throw new GithubAuthSettingsError(`LINK_TOKEN_KEYS: key id "${match[1]}" appears twice`);
    }
    tokenKeys.push({ id: match[1] as string, key });
  }
  return Object.freeze({ app, tokenKeys: Object.freeze(tokenKeys) });
}
