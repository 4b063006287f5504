-- Uses of skills (issue 19, /about/metrics): distinct clients per skill per day. `skill_uses` keeps only the
-- daily counts. Without Redis, `skill_use_marks` holds today's salted client hashes (a row per client and
-- skill, so counting is exact) and `skill_use_clients` caps how many skills one client adds to per day; both
-- are emptied of past days at every roll-up, and the salt that made the hashes never reaches the database.
CREATE TABLE "skill_uses" (
	"skill_id" bigint NOT NULL,
	"day" date NOT NULL,
	"uses" integer NOT NULL,
	CONSTRAINT "skill_uses_pkey" PRIMARY KEY("skill_id","day")
);
--> statement-breakpoint
ALTER TABLE "skill_uses" ADD CONSTRAINT "skill_uses_skill_id_skills_id_fk" FOREIGN KEY ("skill_id") REFERENCES "public"."skills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "skill_uses_day_idx" ON "skill_uses" USING btree ("day");--> statement-breakpoint
CREATE TABLE "skill_use_marks" (
	"day" date NOT NULL,
	"skill_id" bigint NOT NULL,
	"client_hash" text NOT NULL,
	CONSTRAINT "skill_use_marks_pkey" PRIMARY KEY("day","skill_id","client_hash")
);
--> statement-breakpoint
CREATE TABLE "skill_use_clients" (
	"day" date NOT NULL,
	"client_hash" text NOT NULL,
	"skills" integer NOT NULL,
	CONSTRAINT "skill_use_clients_pkey" PRIMARY KEY("day","client_hash")
);
