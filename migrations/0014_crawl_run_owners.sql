-- A crawl run whose jobs live in one process's in-process queue (a hub or crawler on PostgreSQL without
-- Redis) carries that process's advisory-lock key, so another process can tell when its owner died and end
-- it as interrupted instead of leaving it running for ever.
ALTER TABLE "crawl_runs" ADD COLUMN "owner_lock" integer;
