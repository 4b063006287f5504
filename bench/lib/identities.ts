/** Skills of the benchmark index to probe and resolve, picked deterministically (by a hash of the identity). */
import pg from 'pg';

export interface IndexedSkill {
  identity: string;
  revision: string;
  owner: string;
  container: string;
  path: string;
}

/** `count` live skills with their current revision, in a stable pseudo-random order. */
export async function pickSkills(
  databaseUrl: string,
  count: number,
  salt = 'bench',
): Promise<IndexedSkill[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query(
      `select identity, revision, owner, container, path from skills
       where gone_at is null and parse_error is null and source = 'gh'
       order by md5(identity || $1) limit $2`,
      [salt, count],
    );
    return r.rows as IndexedSkill[];
  } finally {
    await client.end();
  }
}

/** The API path of a skill. */
export function skillPath(identity: string): string {
  return `/v1/skills/${encodeURI(identity)}`;
}
