-- Indexing people can see and trigger (SPEC 2.6): each repository keeps the problems of its last crawl
-- that read its tree, its GitHub id (renames and transfers keep it) and when a job last started on it;
-- index requests coalesce per repository (one open request at a time); webhook deliveries are recorded
-- once by X-GitHub-Delivery; renamed and transferred repositories leave a redirect behind.
ALTER TABLE "repositories" ADD COLUMN "github_id" bigint;
--> statement-breakpoint
ALTER TABLE "repositories" ADD COLUMN "problems" jsonb DEFAULT '[]'::jsonb NOT NULL;
--> statement-breakpoint
ALTER TABLE "repositories" ADD COLUMN "crawl_started_at" timestamp with time zone;
--> statement-breakpoint
CREATE TABLE "index_requests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"name" text NOT NULL,
	"origin" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"run_id" bigint,
	"coalesced" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "index_requests" ADD CONSTRAINT "index_requests_run_id_crawl_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."crawl_runs"("id") ON DELETE set null ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "index_requests_open_key" ON "index_requests" USING btree (lower("owner"),lower("name")) WHERE "index_requests"."state" = 'open';
--> statement-breakpoint
CREATE INDEX "index_requests_repository_idx" ON "index_requests" USING btree (lower("owner"),lower("name"),"created_at");
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"delivery_id" text PRIMARY KEY NOT NULL,
	"event" text NOT NULL,
	"action" text,
	"repository" text,
	"outcome" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "repository_redirects" (
	"old_owner" text NOT NULL,
	"old_name" text NOT NULL,
	"repository_id" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "repository_redirects" ADD CONSTRAINT "repository_redirects_repository_id_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."repositories"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "repository_redirects_old_key" ON "repository_redirects" USING btree (lower("old_owner"),lower("old_name"));
--> statement-breakpoint
CREATE INDEX "repository_redirects_repository_idx" ON "repository_redirects" USING btree ("repository_id");
--> statement-breakpoint
-- A renamed or transferred repository moves its skills to another owner/container: both the folders it
-- leaves and those it enters are recomputed (0003 only recomputed the new side).
CREATE OR REPLACE FUNCTION atskills_folders_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched jsonb;
BEGIN
  SELECT jsonb_agg(DISTINCT s.folder_key) INTO touched FROM (
    SELECT jsonb_build_object('source', n.source, 'owner', n.owner, 'container', n.container) AS side,
           jsonb_build_object('source', o.source, 'owner', o.owner, 'container', o.container) AS before,
           (o.owner <> n.owner OR o.container <> n.container) AS moved
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.gone_at IS NULL) <> (n.gone_at IS NULL) OR o.revision <> n.revision
       OR o.visibility <> n.visibility OR o.stars <> n.stars OR o.path <> n.path
       OR o.owner <> n.owner OR o.container <> n.container
  ) c, LATERAL (SELECT c.side UNION ALL SELECT c.before WHERE c.moved) AS s(folder_key);
  IF touched IS NOT NULL THEN PERFORM atskills_recompute_folders(touched); END IF;
  RETURN NULL;
END $$;
