-- Persisted in-memory structures of the API (the suggestion model): a restarted API loads the last one and
-- catches up from its change mark instead of reading every skill's text and building for minutes.
CREATE TABLE "model_snapshots" (
  "name" text PRIMARY KEY NOT NULL,
  "format" text NOT NULL,
  "mark" text NOT NULL,
  "skills" integer NOT NULL,
  "bytes" bigint NOT NULL,
  "parts" integer NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE TABLE "model_snapshot_parts" (
  "name" text NOT NULL REFERENCES "model_snapshots"("name") ON DELETE CASCADE,
  "part" integer NOT NULL,
  "content" bytea NOT NULL,
  CONSTRAINT "model_snapshot_parts_name_part_pk" PRIMARY KEY("name","part")
);--> statement-breakpoint
-- The parts are gzip already: Postgres's own compression would only spend time on them.
ALTER TABLE "model_snapshot_parts" ALTER COLUMN "content" SET STORAGE EXTERNAL;
