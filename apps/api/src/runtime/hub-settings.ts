/**
 * The settings of a hub process: one composed schema (what the app serves, running it as a service, the
 * linked repositories' credentials and the crawler it runs in-process) parsed once at start-up, then each
 * part handed the settings it reads. A variable two parts share (DATABASE_URL, REDIS_URL, LOG_LEVEL,
 * GITHUB_API_URL, SHUTDOWN_TIMEOUT_MS, GITHUB_APP_*, LINK_TOKEN_KEYS) is parsed once, by the hub's schema.
 */
import { type CrawlerSettings, CrawlerSettingsSchema, crawlerSettingsFrom } from '@atskills/crawler';
import { type Env, parseEnv } from '@atskills/protocol/config';
import { z } from 'zod';
import { type AppConfig, appConfigFrom, HubEnvSchema, hubGithubAuth } from '../config.js';
import { type OpsConfig, OpsEnvSchema, opsConfigFrom } from './ops-config.js';

/**
 * Every variable a hub process reads. Later spreads win, so a variable the crawler shares with the hub is
 * parsed by the hub's schema (the same type and default; its description is the hub's).
 */
export const HubProcessSchema = z.object({
  ...CrawlerSettingsSchema.shape,
  ...OpsEnvSchema.shape,
  ...HubEnvSchema.shape,
});

/** The parts of a hub process's settings, each frozen. */
export interface HubSettings {
  /** What the app serves (config.ts). */
  readonly config: AppConfig;
  /** Running it as a service (ops-config.ts). */
  readonly ops: OpsConfig;
  /** The in-process crawler's settings (its link credentials are `config.github.auth`, checked once). */
  readonly crawler: CrawlerSettings;
}

/** Parses a hub process's environment once, failing with `Invalid configuration: VAR: reason`. */
export function loadHubSettings(env: Env): HubSettings {
  const values = parseEnv(HubProcessSchema, env, 'configuration');
  const githubAuth = hubGithubAuth(values);
  return Object.freeze({
    config: appConfigFrom(values, githubAuth),
    ops: opsConfigFrom(values),
    crawler: crawlerSettingsFrom(values, 'configuration', githubAuth),
  });
}
