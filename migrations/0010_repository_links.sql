-- Team collections kept in GitHub repositories (SPEC 2.3, last paragraph): one row per linked collection,
-- with its credential (an App installation, or a sealed fine-grained token) and its index status.
CREATE TABLE "repository_links" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"namespace_id" bigint NOT NULL,
	"collection_id" bigint NOT NULL,
	"github_owner" text NOT NULL,
	"github_repo" text NOT NULL,
	"github_repo_id" bigint,
	"folder" text DEFAULT '' NOT NULL,
	"credential" text NOT NULL,
	"installation_id" bigint,
	"token_key_id" text,
	"token_sealed" text,
	"token_last4" text,
	"token_expires_at" timestamp with time zone,
	"status" text DEFAULT 'queued' NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"failed_at" timestamp with time zone,
	"head_commit" text,
	"last_indexed_at" timestamp with time zone,
	"problems" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "repository_links_credential_check" CHECK (("repository_links"."credential" = 'app' and "repository_links"."token_sealed" is null) or ("repository_links"."credential" = 'token' and "repository_links"."token_sealed" is not null and "repository_links"."token_key_id" is not null and "repository_links"."installation_id" is null))
);
--> statement-breakpoint
ALTER TABLE "repository_links" ADD CONSTRAINT "repository_links_namespace_id_namespaces_id_fk" FOREIGN KEY ("namespace_id") REFERENCES "public"."namespaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repository_links" ADD CONSTRAINT "repository_links_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repository_links" ADD CONSTRAINT "repository_links_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "repository_links_collection_key" ON "repository_links" USING btree ("collection_id");--> statement-breakpoint
CREATE INDEX "repository_links_repo_idx" ON "repository_links" USING btree (lower("github_owner"),lower("github_repo"));--> statement-breakpoint
CREATE INDEX "repository_links_repo_id_idx" ON "repository_links" USING btree ("github_repo_id");--> statement-breakpoint
CREATE INDEX "repository_links_installation_idx" ON "repository_links" USING btree ("installation_id");
