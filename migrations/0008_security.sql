CREATE TABLE "team_invitations" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"namespace_id" bigint NOT NULL REFERENCES "namespaces"("id") ON DELETE cascade,
	"user_id" bigint NOT NULL REFERENCES "users"("id") ON DELETE cascade,
	"role" text NOT NULL,
	"invited_by" bigint REFERENCES "users"("id") ON DELETE set null,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	"status" text DEFAULT 'pending' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "team_invitations_pending_key" ON "team_invitations" ("namespace_id","user_id") WHERE "status" = 'pending';
--> statement-breakpoint
CREATE INDEX "team_invitations_user_idx" ON "team_invitations" ("user_id");
--> statement-breakpoint
CREATE TABLE "skill_reports" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"identity" text NOT NULL,
	"revision" text NOT NULL,
	"kind" text NOT NULL,
	"rule" text,
	"content_hash" text,
	"reporter_user_id" bigint REFERENCES "users"("id") ON DELETE set null,
	"note" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"decided_by" bigint REFERENCES "users"("id") ON DELETE set null,
	"decision_note" text,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "skill_reports_status_idx" ON "skill_reports" ("status","id");
--> statement-breakpoint
CREATE TABLE "flag_suppressions" (
	"content_hash" text NOT NULL,
	"rule" text NOT NULL,
	"report_id" bigint REFERENCES "skill_reports"("id") ON DELETE set null,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "flag_suppressions_pkey" PRIMARY KEY("content_hash","rule")
);
