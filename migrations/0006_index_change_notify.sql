-- Tells every listening hub process that the skills index changed, whoever wrote it (crawler, publish,
-- admin, a SQL console), so in-process read caches are dropped at commit instead of after a timeout.
-- Statement-level, so a crawl batch of thousands of rows sends one notification, and Postgres folds
-- identical notifications of one transaction into one.
CREATE OR REPLACE FUNCTION atskills_notify_index_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('atskills_index', TG_TABLE_NAME);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER skills_notify_index_change
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON skills
  FOR EACH STATEMENT EXECUTE FUNCTION atskills_notify_index_change();
