CREATE TABLE "blobs" (
	"sha256" text PRIMARY KEY NOT NULL,
	"size" integer NOT NULL,
	"content" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "safety_verdicts" (
	"content_sha256" text PRIMARY KEY NOT NULL,
	"scanner_version" text NOT NULL,
	"flags" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "crawl_reports" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" bigint,
	"repository_id" bigint NOT NULL,
	"outcome" text NOT NULL,
	"head_revision" text,
	"skills_found" integer DEFAULT 0 NOT NULL,
	"skills_added" integer DEFAULT 0 NOT NULL,
	"skills_updated" integer DEFAULT 0 NOT NULL,
	"skills_removed" integer DEFAULT 0 NOT NULL,
	"warnings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"bytes_downloaded" bigint DEFAULT 0 NOT NULL,
	"duration_ms" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "crawl_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"request_id" text,
	"repositories_total" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"totals" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "repositories" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"name" text NOT NULL,
	"default_branch" text,
	"head_revision" text,
	"description" text,
	"stars" integer DEFAULT 0 NOT NULL,
	"license" text,
	"archived" boolean DEFAULT false NOT NULL,
	"pushed_at" timestamp with time zone,
	"topics" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"metadata_etag" text,
	"last_crawled_at" timestamp with time zone,
	"last_crawl_outcome" text,
	"last_crawl_error" text,
	"next_crawl_at" timestamp with time zone,
	"gone_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "skill_revisions" (
	"skill_id" bigint NOT NULL,
	"revision" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"frontmatter" jsonb NOT NULL,
	"body" text NOT NULL,
	"files" jsonb NOT NULL,
	"commit" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "skill_revisions_skill_id_revision_pk" PRIMARY KEY("skill_id","revision")
);
--> statement-breakpoint
CREATE TABLE "skills" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"identity" text NOT NULL,
	"source" text NOT NULL,
	"repository_id" bigint,
	"collection_id" bigint,
	"owner" text NOT NULL,
	"container" text NOT NULL,
	"path" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"frontmatter" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"warnings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"parse_error" jsonb,
	"files" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"flags" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"revision" text NOT NULL,
	"commit" text,
	"description_tokens" integer DEFAULT 0 NOT NULL,
	"body_tokens" integer DEFAULT 0 NOT NULL,
	"stars" integer DEFAULT 0 NOT NULL,
	"visibility" text DEFAULT 'public' NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"gone_at" timestamp with time zone,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple', coalesce("skills"."name", '') || ' ' || replace(coalesce("skills"."name", ''), '-', ' ')), 'A') || setweight(to_tsvector('english', coalesce("skills"."description", '')), 'B') || setweight(to_tsvector('english', left(coalesce("skills"."body", ''), 100000)), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" bigint NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"expires_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"namespace_id" bigint,
	"actor_user_id" bigint,
	"action" text NOT NULL,
	"target" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"request_id" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "collection_revisions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"collection_id" bigint NOT NULL,
	"revision" text NOT NULL,
	"manifest" jsonb NOT NULL,
	"skill_count" integer NOT NULL,
	"size_bytes" bigint NOT NULL,
	"visibility" text NOT NULL,
	"published_by" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "collections" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"namespace_id" bigint NOT NULL,
	"name" text NOT NULL,
	"visibility" text DEFAULT 'private' NOT NULL,
	"current_revision" text,
	"popularity" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"namespace_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "memberships_namespace_id_user_id_pk" PRIMARY KEY("namespace_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "namespaces" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"user_id" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"is_admin" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "crawl_reports" ADD CONSTRAINT "crawl_reports_run_id_crawl_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."crawl_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crawl_reports" ADD CONSTRAINT "crawl_reports_repository_id_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_revisions" ADD CONSTRAINT "skill_revisions_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_repository_id_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_namespace_id_namespaces_id_fk" FOREIGN KEY ("namespace_id") REFERENCES "public"."namespaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_actor_user_id_users_id_fk" FOREIGN KEY ("actor_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_revisions" ADD CONSTRAINT "collection_revisions_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_revisions" ADD CONSTRAINT "collection_revisions_published_by_users_id_fk" FOREIGN KEY ("published_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collections" ADD CONSTRAINT "collections_namespace_id_namespaces_id_fk" FOREIGN KEY ("namespace_id") REFERENCES "public"."namespaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_namespace_id_namespaces_id_fk" FOREIGN KEY ("namespace_id") REFERENCES "public"."namespaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "namespaces" ADD CONSTRAINT "namespaces_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "crawl_reports_repository_idx" ON "crawl_reports" USING btree ("repository_id","started_at");--> statement-breakpoint
CREATE INDEX "crawl_reports_run_idx" ON "crawl_reports" USING btree ("run_id");--> statement-breakpoint
CREATE UNIQUE INDEX "repositories_full_name_key" ON "repositories" USING btree (lower("owner"),lower("name"));--> statement-breakpoint
CREATE INDEX "repositories_next_crawl_idx" ON "repositories" USING btree ("next_crawl_at");--> statement-breakpoint
CREATE UNIQUE INDEX "skills_identity_key" ON "skills" USING btree ("identity");--> statement-breakpoint
CREATE INDEX "skills_repository_idx" ON "skills" USING btree ("repository_id");--> statement-breakpoint
CREATE INDEX "skills_collection_idx" ON "skills" USING btree ("collection_id");--> statement-breakpoint
CREATE INDEX "skills_owner_container_path_idx" ON "skills" USING btree ("owner","container","path");--> statement-breakpoint
CREATE INDEX "skills_search_idx" ON "skills" USING gin ("search");--> statement-breakpoint
CREATE INDEX "skills_name_trgm_idx" ON "skills" USING gin ("name" gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash_key" ON "api_tokens" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "api_tokens_user_idx" ON "api_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "audit_log_namespace_idx" ON "audit_log" USING btree ("namespace_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "collection_revisions_key" ON "collection_revisions" USING btree ("collection_id","revision");--> statement-breakpoint
CREATE UNIQUE INDEX "collections_namespace_name_key" ON "collections" USING btree ("namespace_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "namespaces_name_key" ON "namespaces" USING btree ("name");--> statement-breakpoint
CREATE UNIQUE INDEX "users_name_key" ON "users" USING btree (lower("name"));