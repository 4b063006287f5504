import { createHash, randomBytes } from 'node:crypto';
import { type Database, recordUseMarks, skillIdsByIdentity, storeDailyUses } from '@atskills/db';
import type { Redis } from 'ioredis';
import type { ServiceLogger } from './service-logger.js';

/** How many skills one client adds a use to per day; past that, its resolutions count nothing. */
export const USES_CAP_PER_CLIENT = 200;
/** How long Redis keeps a day's salt, client sets and HyperLogLogs (the salt is then gone for good). */
const REDIS_DAY_TTL_SECONDS = 2 * 24 * 3600;
/** Marks held in memory at most (a database outage drops uses rather than memory). */
const MAX_PENDING = 50_000;

// One Lua call per mark keeps the cap and the count atomic across replicas: the client's set of skills
// today grows only below the cap, and only a new member adds the client to the skill's HyperLogLog.
const MARK_SCRIPT = `
local added = redis.call('SADD', KEYS[1], ARGV[1])
if added == 0 then return 0 end
if redis.call('SCARD', KEYS[1]) > tonumber(ARGV[3]) then redis.call('SREM', KEYS[1], ARGV[1]) return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('PFADD', KEYS[2], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1`;

/** The UTC day of an instant, YYYY-MM-DD. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * Who a use is counted for: the authenticated account when the request carries a verified token, else the
 * client address. Headers a caller chooses freely (User-Agent, a made-up Authorization) are no part of it:
 * rotating them must not make one caller many people (SPEC 2.8).
 */
export interface ClientParts {
  ip: string;
  /** The verified account (viewer.userId), when there is one. */
  account?: number | null | undefined;
}

/** The counted person as one string (`account:<id>` or `address:<ip>`): the input of clientDigest. */
export function clientKey(parts: ClientParts): string {
  return typeof parts.account === 'number' ? `account:${parts.account}` : `address:${parts.ip}`;
}

/**
 * An unsalted digest of the counted person (account, else address): held in memory until the next flush
 * only, and salted with the day's salt before anything is stored.
 */
export function clientDigest(parts: ClientParts) {
  return createHash('sha256').update(clientKey(parts)).digest('base64url');
}

/**
 * Counts uses of skills: distinct clients per skill per day, capped per client. `note` only buffers (the
 * request path never waits on a write); `flush` salts the client digests with the day's random salt
 * (kept in Redis for 2 days, or in this process's memory, never in the database) and writes them: to
 * per-skill HyperLogLogs in Redis whose counts are rolled into `skill_uses`, or to `skill_use_marks`.
 */
export class UsesCounter {
  private pending = new Map<string, Map<string, Set<string>>>();
  private pendingCount = 0;
  private readonly salts = new Map<string, string>();
  private flushing: Promise<void> | undefined;
  /** Called after a batch of uses is written (the in-memory search index re-reads them). */
  onWritten: (() => void) | undefined;
  private daySecond = Number.NaN;
  private dayText = '';

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date,
    private readonly redis: Redis | undefined,
    private readonly log: ServiceLogger,
    private readonly capPerClient = USES_CAP_PER_CLIENT,
    private readonly keyPrefix = 'atskills:uses',
  ) {}

  /** Buffers one resolution of a skill (canonical identity) by a client digest. */
  note(identity: string, client: string): void {
    if (this.pendingCount >= MAX_PENDING) return;
    const now = this.clock();
    // The day string is kept for the second it was made in (a batch notes up to 128 uses at once).
    const second = Math.floor(now.getTime() / 1000);
    if (second !== this.daySecond) {
      this.daySecond = second;
      this.dayText = dayOf(now);
    }
    const day = this.dayText;
    const byIdentity = this.pending.get(day) ?? new Map<string, Set<string>>();
    this.pending.set(day, byIdentity);
    const clients = byIdentity.get(identity) ?? new Set<string>();
    byIdentity.set(identity, clients);
    if (clients.has(client)) return;
    clients.add(client);
    this.pendingCount++;
  }

  /** Writes what is buffered (one flush at a time; a failed flush is logged and its marks dropped). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pendingCount === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.pendingCount = 0;
    this.flushing = this.write(batch)
      .then(() => this.onWritten?.())
      .catch((err) => this.log.warn({ err }, 'uses: a batch of uses could not be written'))
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  private async saltOf(day: string): Promise<string> {
    const known = this.salts.get(day);
    if (known) return known;
    let salt = randomBytes(32).toString('base64url');
    if (this.redis) {
      const key = `${this.keyPrefix}:salt:${day}`;
      await this.redis.set(key, salt, 'EX', REDIS_DAY_TTL_SECONDS, 'NX');
      salt = (await this.redis.get(key)) ?? salt;
    }
    // Yesterday's salt is forgotten as soon as a new day's is made.
    this.salts.clear();
    this.salts.set(day, salt);
    return salt;
  }

  private async write(batch: Map<string, Map<string, Set<string>>>): Promise<void> {
    for (const [day, byIdentity] of batch) {
      const ids = await skillIdsByIdentity(this.db, [...byIdentity.keys()]);
      const salt = await this.saltOf(day);
      const marks: Array<{ skillId: number; clientHash: string }> = [];
      for (const [identity, clients] of byIdentity) {
        const skillId = ids.get(identity);
        if (skillId === undefined) continue;
        for (const client of clients) {
          marks.push({
            skillId,
            clientHash: createHash('sha256').update(`${salt}\n${client}`).digest('base64url'),
          });
        }
      }
      if (this.redis) await this.writeToRedis(day, marks);
      else await recordUseMarks(this.db, day, marks, this.capPerClient);
    }
  }

  private async writeToRedis(day: string, marks: Array<{ skillId: number; clientHash: string }>) {
    const redis = this.redis as Redis;
    const pipeline = redis.pipeline();
    for (const m of marks) {
      pipeline.eval(
        MARK_SCRIPT,
        2,
        `${this.keyPrefix}:${day}:client:${m.clientHash}`,
        `${this.keyPrefix}:${day}:skill:${m.skillId}`,
        String(m.skillId),
        m.clientHash,
        String(this.capPerClient),
        String(REDIS_DAY_TTL_SECONDS),
      );
    }
    const results = (await pipeline.exec()) ?? [];
    // Only skills a mark was added to need a new count (a capped or repeated client changed nothing).
    const touched = [...new Set(marks.filter((_, i) => results[i]?.[1] === 1).map((m) => m.skillId))];
    const counts = await Promise.all(
      touched.map((id) => redis.pfcount(`${this.keyPrefix}:${day}:skill:${id}`)),
    );
    await storeDailyUses(
      this.db,
      day,
      touched.map((skillId, i) => ({ skillId, uses: counts[i] ?? 0 })),
    );
  }
}
