import { readFileSync } from 'node:fs';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { configFileFrom, isMissing, type StoredConfig } from '@atskills/protocol/node/resolving';

/** Reads the config `login` wrote ({} when there is none). */
export async function readStoredConfig(env: NodeJS.ProcessEnv): Promise<StoredConfig> {
  const file = configFileFrom(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8'); // every run reads it: sync is cheaper than a file handle
  } catch (error) {
    if (isMissing(error)) return {};
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const out: StoredConfig = {};
    if (typeof parsed.hub === 'string') out.hub = parsed.hub;
    if (typeof parsed.token === 'string') out.token = parsed.token;
    if (typeof parsed.suggest === 'boolean' || typeof parsed.suggest === 'number')
      out.suggest = parsed.suggest;
    return out;
  } catch {
    throw new Error(`${file} is not valid JSON; fix it or run \`atskills login\` again.`);
  }
}

/** Writes the config with mode 0600 (it holds a token) in a 0700 folder; returns the file's path. */
export async function writeStoredConfig(env: NodeJS.ProcessEnv, config: StoredConfig): Promise<string> {
  const file = configFileFrom(env);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, file);
  return file;
}
