-- The browse pages and Atom feeds (issue 19) list the live skills changed or added last: these partial indexes
-- let "newest first, limit 50" walk an index instead of sorting every live skill per request.
CREATE INDEX "skills_live_updated_idx" ON "skills" USING btree ("updated_at" DESC NULLS FIRST,"identity") WHERE "skills"."gone_at" is null and "skills"."parse_error" is null;--> statement-breakpoint
CREATE INDEX "skills_live_first_seen_idx" ON "skills" USING btree ("first_seen_at" DESC NULLS FIRST,"identity") WHERE "skills"."gone_at" is null and "skills"."parse_error" is null;
