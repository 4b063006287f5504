-- Each repository job of a run writes one report, keyed by the name it was queued under: two names of one
-- repository (an old and a new name, rows a rename merged) end on one repository row, and a run that
-- counted one report per row waited for ever for the second. Reports written before stay keyed by row.
ALTER TABLE "crawl_reports" ADD COLUMN "queued_as" text;--> statement-breakpoint
CREATE INDEX "crawl_reports_run_queued_idx" ON "crawl_reports" USING btree ("run_id","queued_as");
