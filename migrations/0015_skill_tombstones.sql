-- The identities skills leave: rows deleted outright (a repository or collection removed with its skills, by
-- cascade) and identities rewritten (a moved repository's skills take the new name's). No skills row names
-- them any more, so the change feed, which reads skills rows by their writing transaction's xmin, could not
-- tell anyone; an engine keeping its own copy of the documents (Meilisearch) kept serving them until a full
-- rebuild. The feed reads these rows the same way. Each keeps where the skill was (its container), so that
-- container's documents can be replaced. Rows older than seven days are pruned as new ones arrive.
CREATE TABLE "skill_tombstones" (
  "identity" text NOT NULL,
  "source" text NOT NULL,
  "owner" text NOT NULL,
  "container" text NOT NULL,
  "left_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "skill_tombstones_identity_idx" ON "skill_tombstones" USING btree ("identity");--> statement-breakpoint
CREATE INDEX "skill_tombstones_left_at_idx" ON "skill_tombstones" USING btree ("left_at");--> statement-breakpoint
CREATE OR REPLACE FUNCTION atskills_skill_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO skill_tombstones (identity, source, owner, container)
    VALUES (OLD.identity, OLD.source, OLD.owner, OLD.container);
  DELETE FROM skill_tombstones WHERE left_at < now() - interval '7 days';
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Row-level: deletes and renames are rare (a rename's WHEN clause skips every other update of a skill row).
CREATE TRIGGER skills_tombstone_delete AFTER DELETE ON skills
  FOR EACH ROW EXECUTE FUNCTION atskills_skill_tombstone();--> statement-breakpoint
CREATE TRIGGER skills_tombstone_rename AFTER UPDATE OF identity ON skills
  FOR EACH ROW WHEN (OLD.identity IS DISTINCT FROM NEW.identity) EXECUTE FUNCTION atskills_skill_tombstone();
