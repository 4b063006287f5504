import { lstatSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { diskPath, formatIdentity, type Identity } from '../identity.js';
import { lookup, SKILL_FILE } from '../leaf-rule.js';
import type { MenuItem } from '../menu.js';
import { isMissing, walkFolder } from './fs-tree.js';
import { overCapError } from './over-cap.js';
import { SOURCE_FILE } from './source-file.js';

/** A project folder's answer for an identity. */
export type LocalAnswer = { kind: 'skill'; dir: string } | { kind: 'menu'; dir: string; items: MenuItem[] };

/**
 * The project's own copy, `.atskills/<disk path>` (SPEC 1.4 step 1): used whenever it exists and has
 * content; `.source` is never read to resolve, and nothing here touches the network.
 */
export async function resolveLocal(id: Identity, projectDir: string): Promise<LocalAnswer | undefined> {
  const dir = path.join(projectDir, diskPath(id));
  if (!(await hasContent(dir))) return undefined;
  // A folder inside a project skill is that skill's files, not a skill or menu of its own (SPEC 1.2).
  if (enclosingSkill(projectDir, id) !== undefined) return undefined;
  if (await isFile(path.join(dir, SKILL_FILE))) return { kind: 'skill', dir };
  const found = lookup(await walkFolder(dir), '');
  if (found.kind === 'refused') throw overCapError(id, found.count, found.subcollections);
  if (found.kind !== 'menu') return undefined;
  // yaml is loaded only here: resolving a project skill reads its SKILL.md later, in the resolver.
  const { tryParseSkillMarkdown } = await import('../frontmatter.js');
  const items: MenuItem[] = [];
  for (const skill of found.skills) {
    const doc = tryParseSkillMarkdown(
      await readFile(path.join(dir, skill, SKILL_FILE)),
      path.posix.basename(skill),
    );
    items.push({
      identity: formatIdentity(id.source, `${id.path}/${skill}`),
      name: doc.ok ? doc.doc.name : path.posix.basename(skill),
      description: doc.ok ? doc.doc.description : '',
    });
  }
  return { kind: 'menu', dir, items };
}

/**
 * The project skill folder above the identity's folder (`.atskills/`-relative, e.g. `deploy/runbook`), if
 * one holds SKILL.md: the walk never descends into a skill, so the identity names a part of it.
 */
export function enclosingSkill(projectDir: string, id: Identity): string | undefined {
  const root = path.join(projectDir, '.atskills');
  for (
    let current = path.dirname(path.join(projectDir, diskPath(id)));
    current.startsWith(`${root}${path.sep}`);
    current = path.dirname(current)
  ) {
    try {
      if (lstatSync(path.join(current, SKILL_FILE)).isFile())
        return path.relative(root, current).split(path.sep).join('/');
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }
  return undefined;
}

// The two checks below run on every resolve (the client's start-up path): synchronous, since one stat or
// listing is cheaper than the promise machinery around it.

/** A folder "has content" when it holds anything besides a `.source` stamp. */
async function hasContent(dir: string): Promise<boolean> {
  try {
    if (!lstatSync(dir).isDirectory()) return false;
    return readdirSync(dir).some((name) => name !== SOURCE_FILE);
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return lstatSync(file).isFile();
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}
