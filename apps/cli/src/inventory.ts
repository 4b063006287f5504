import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  diskPath,
  expandAutotrigger,
  findSkillFolders,
  parseIdentity,
  parseSourceStamp,
} from '@atskills/protocol';
import { readAutotrigger, SOURCE_FILE, walkFolder } from '@atskills/protocol/node';

/** A folder under `.atskills/` that holds a `.source` stamp: a skill the project saved. */
export interface SavedSkill {
  identity: string;
  /** The folder, relative to the project root (e.g. `.atskills/gh/o/r/p`). */
  dir: string;
  /** From `.source`: the upstream revision and the date it was saved. */
  revision: string;
  savedAt: string;
  /** Whether an `.autotrigger` line makes it resident (its own line, a folder line, or a glob). */
  installed: boolean;
  /** Set when `.source` cannot be read, or names another identity than the folder answers. */
  stampProblem?: string;
}

/** A cloud identity an `.autotrigger` line follows (a whole-directory line names its folder). */
export interface InstalledCloud {
  identity: string;
  line: number;
  directory: boolean;
}

/** What the project holds: its saved skills and the cloud identities its `.autotrigger` follows. */
export interface ProjectInventory {
  saved: SavedSkill[];
  installedCloud: InstalledCloud[];
  /** Identities a `!` line of `.autotrigger` has the last word on: no whole-directory line installs them. */
  excluded: string[];
}

/**
 * Reads the project's saved skills (every folder of `.atskills/` holding `.source`) and its `.autotrigger`
 * cloud lines. No network: whether a copy was edited is the caller's (slower) question.
 */
export async function readInventory(projectDir: string): Promise<ProjectInventory> {
  const root = path.join(projectDir, '.atskills');
  const entries = await walkFolder(root);
  const content = await readAutotrigger(projectDir);
  const { entries: selected, excluded } = expandAutotrigger(content, findSkillFolders(entries));
  const installedCloud = selected
    .filter((e) => parseIdentity(e.identity).source !== 'local')
    .map((e) => ({ identity: e.identity, line: e.line, directory: e.directory === true }));
  const isInstalled = (identity: string) =>
    selected.some(
      (e) =>
        e.identity === identity ||
        (e.directory === true && identity.startsWith(`${e.identity}/`) && !excluded.includes(identity)),
    );
  const saved: SavedSkill[] = [];
  for (const entry of entries) {
    if (entry.type !== 'file' || path.posix.basename(entry.path) !== SOURCE_FILE) continue;
    const folder = path.posix.dirname(entry.path);
    const dir = `.atskills/${folder}`;
    let text: string;
    try {
      text = await readFile(path.join(root, entry.path), 'utf8');
      const stamp = parseSourceStamp(text);
      const answers = diskPath(parseIdentity(stamp.identity)) === dir;
      saved.push({
        identity: stamp.identity,
        dir,
        revision: stamp.revision,
        savedAt: stamp.date,
        installed: isInstalled(stamp.identity),
        ...(answers
          ? {}
          : {
              stampProblem: `.source names ${stamp.identity}, whose folder is ${diskPath(parseIdentity(stamp.identity))}`,
            }),
      });
    } catch (error) {
      saved.push({
        identity: dir,
        dir,
        revision: 'unknown',
        savedAt: '',
        installed: false,
        stampProblem: error instanceof Error ? error.message : String(error),
      });
    }
  }
  saved.sort((a, b) => a.dir.localeCompare(b.dir));
  return { saved, installedCloud, excluded };
}

/** The saved skill answering an identity (its canonical text), if the project holds one. */
export function findSaved(inventory: ProjectInventory, identity: string): SavedSkill | undefined {
  return inventory.saved.find((s) => s.identity === identity && !s.stampProblem);
}
