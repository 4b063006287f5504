CREATE TABLE "skill_folders" (
	"source" text NOT NULL,
	"owner" text NOT NULL,
	"container" text NOT NULL,
	"path" text NOT NULL,
	"name" text NOT NULL,
	"visibility" text NOT NULL,
	"skill_count" integer NOT NULL,
	"stars" integer NOT NULL,
	"revision" text NOT NULL,
	CONSTRAINT "skill_folders_source_owner_container_path_pk" PRIMARY KEY("source","owner","container","path")
);
--> statement-breakpoint
ALTER TABLE "skills" ADD COLUMN "search_head" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple', coalesce("skills"."name", '') || ' ' || replace(coalesce("skills"."name", ''), '-', ' ')), 'A') || setweight(to_tsvector('english', coalesce("skills"."description", '')), 'B')) STORED;--> statement-breakpoint
CREATE INDEX "skill_folders_name_trgm_idx" ON "skill_folders" USING gin ("name" gin_trgm_ops);