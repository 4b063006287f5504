import {
  type Database,
  type HubSkillEntry,
  listHubSkillEntries,
  PUBLIC_SCOPE,
  usesOfIdentities,
} from '@atskills/db';
import { formatIdentity, refusingVerdict, SKILL_FILE } from '@atskills/protocol';
import { LRUCache } from 'lru-cache';
import { buildSkillArchive } from './archive.js';
import { flagRules } from './flags.js';

/** The discovery schema the `skills` CLI (vercel-labs/skills) reads at /.well-known/agent-skills/index.json. */
export const DISCOVERY_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json';

/** One entry of a discovery index (schema 0.2.0). */
export interface DiscoveryEntry {
  name: string;
  description: string;
  /** `skill-md`: `url` serves the SKILL.md; `archive`: a gzip tar of the whole folder. */
  type: 'skill-md' | 'archive';
  /** Root-relative, pinned to the listed revision, so `digest` stays true for as long as the URL answers. */
  url: string;
  /** `sha256:<hex>` of the exact bytes `url` serves. */
  digest: string;
}

/** A discovery index document. */
export interface DiscoveryIndex {
  $schema: typeof DISCOVERY_SCHEMA;
  skills: DiscoveryEntry[];
}

// The CLI skips entries whose name or description it refuses (its isValidSkillEntryV2): leave them out here
// instead, so that what the index lists is what the CLI offers.
const CLI_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_DESCRIPTION = 1024;
const PAGE = 1000;

const encodePath = (segments: string[]) =>
  segments
    .filter((s) => s !== '')
    .map(encodeURIComponent)
    .join('/');

/**
 * The `skills` CLI's discovery index of the hub's public `hub:` skills (SPEC 2.5), or of one collection's:
 * names unique (of skills sharing a name, the most used, then the first by identity), skills judged
 * malicious and names the CLI would refuse left out. A skill of one file is served as its SKILL.md; one with
 * more files as the hub's deterministic archive, whose digest is computed once per revision.
 */
export class DiscoveryIndexes {
  readonly #archiveDigests = new LRUCache<string, string>({ max: 10_000 });

  constructor(private readonly db: Database) {}

  /** The index of every public hub: skill, or of `namespace/collection` only. */
  async build(where: { namespace?: string; collection?: string } = {}): Promise<DiscoveryIndex> {
    const candidates: HubSkillEntry[] = [];
    for (let after: string | undefined; ; ) {
      const page = await listHubSkillEntries(this.db, PUBLIC_SCOPE, {
        ...where,
        limit: PAGE,
        ...(after ? { after } : {}),
      });
      for (const skill of page) {
        if (!CLI_NAME.test(skill.name) || skill.name.length > 64) continue;
        if (!skill.description || skill.description.length > MAX_DESCRIPTION) continue;
        if (refusingVerdict(flagRules(skill.flags))) continue;
        if (!skill.files.some((f) => f.path === SKILL_FILE && !f.skipped)) continue;
        candidates.push(skill);
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1]!.identity;
    }
    const uses = new Map<string, number>();
    const today = new Date().toISOString().slice(0, 10);
    for (let i = 0; i < candidates.length; i += PAGE) {
      const counts = await usesOfIdentities(
        this.db,
        candidates.slice(i, i + PAGE).map((s) => s.identity),
        today,
      );
      for (const [identity, count] of counts) uses.set(identity, count.total);
    }
    const byName = new Map<string, HubSkillEntry>();
    for (const skill of candidates) {
      const held = byName.get(skill.name);
      // Candidates come in identity order: a later one replaces the held one only when strictly more used.
      if (!held || (uses.get(skill.identity) ?? 0) > (uses.get(held.identity) ?? 0))
        byName.set(skill.name, skill);
    }
    const chosen = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const entries: DiscoveryEntry[] = [];
    for (const skill of chosen) entries.push(await this.#entry(skill));
    return { $schema: DISCOVERY_SCHEMA, skills: entries };
  }

  async #entry(skill: HubSkillEntry): Promise<DiscoveryEntry> {
    const segments = [skill.owner, skill.container, ...skill.path.split('/')];
    const rev = `?rev=${encodeURIComponent(skill.revision)}`;
    const served = skill.files.filter((f) => !f.skipped);
    const base = { name: skill.name, description: skill.description };
    if (served.length === 1) {
      // The compatibility route serves the stored SKILL.md bytes as they are (SPEC 2.2).
      const file = served[0]!;
      return {
        ...base,
        type: 'skill-md',
        url: `/api/skills/${encodePath(segments)}${rev}`,
        digest: `sha256:${file.sha256}`,
      };
    }
    const key = `${skill.identity}\n${skill.revision}`;
    let digest = this.#archiveDigests.get(key);
    if (!digest) {
      const archive = await buildSkillArchive(this.db, skill);
      digest = Buffer.from(archive.contentDigest.slice('sha-256=:'.length, -1), 'base64').toString('hex');
      this.#archiveDigests.set(key, digest);
    }
    return {
      ...base,
      type: 'archive',
      url: `/v1/archive/${formatIdentity('hub', encodePath(segments))}${rev}`,
      digest: `sha256:${digest}`,
    };
  }
}
