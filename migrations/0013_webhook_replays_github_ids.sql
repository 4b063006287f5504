-- Issue 24 (SPEC 2.8). A signed delivery replayed under a new X-GitHub-Delivery is a duplicate: deliveries of
-- both webhook routes are also keyed by a digest of their route and signed body, kept for a window (older rows
-- are pruned as new ones arrive). Repository events find the repository by GitHub's numeric id.
ALTER TABLE "webhook_deliveries" ADD COLUMN "body_sha256" text;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_body_key" ON "webhook_deliveries" USING btree ("body_sha256");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_received_idx" ON "webhook_deliveries" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "repositories_github_id_idx" ON "repositories" USING btree ("github_id");
