/**
 * Debian's Chromium driven headless through playwright-core, for browser tests. CI installs `chromium` with
 * apt (.ci/run); on a machine without it, `findChromium()` tries `apt-get install -y chromium` once (as root)
 * and otherwise reports why, so the test can skip with that message instead of failing obscurely.
 */
import { execFile } from 'node:child_process';
import { access, constants, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BrowserContext, chromium } from 'playwright-core';

const run = promisify(execFile);

/** Where Debian's package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

// Headless, sandbox off (containers run as root), and every background network feature off, so a test
// talks to 127.0.0.1 only.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium executable, installing Debian's package when it is missing and we may; else why not. */
export async function findChromium(): Promise<{ path: string } | { path: null; reason: string }> {
  if (await executable(CHROMIUM_PATH)) return { path: CHROMIUM_PATH };
  if (process.getuid?.() !== 0) {
    return {
      path: null,
      reason: `${CHROMIUM_PATH} is missing and installing it needs root (apt-get install chromium)`,
    };
  }
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['install', '-y', '-qq', 'chromium'], { env, timeout: 300_000 }).catch(async () => {
      await run('apt-get', ['update', '-qq'], { env, timeout: 300_000 });
      await run('apt-get', ['install', '-y', '-qq', 'chromium'], { env, timeout: 300_000 });
    });
  } catch (err) {
    return {
      path: null,
      reason: `${CHROMIUM_PATH} is missing and apt-get could not install it: ${String(err)}`,
    };
  }
  return (await executable(CHROMIUM_PATH))
    ? { path: CHROMIUM_PATH }
    : { path: null, reason: `apt-get ran but ${CHROMIUM_PATH} is still missing` };
}

/** A headless browser context with a fresh profile; `close()` removes the profile. */
export interface BrowserSession {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh user-data-dir (a persistent context is how playwright takes one). */
export async function launchBrowser(executablePath: string): Promise<BrowserSession> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'atskills-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 60_000,
    });
    return {
      context,
      async close() {
        await context.close().catch(() => {});
        await rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
}
