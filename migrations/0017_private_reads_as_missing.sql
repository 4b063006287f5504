-- A private repository's public report now reads exactly as a missing one's (SPEC 2.2: private names do not
-- leak). Rows written before still say "repository-private" and would tell anyone until the repository's
-- next crawl (about 30 days for a gone one); operators keep the truth in last_crawl_error.
UPDATE "repositories" SET "problems" = (
  SELECT jsonb_agg(
    CASE WHEN p->>'code' = 'repository-private'
      THEN p || '{"code":"repository-not-found","message":"The repository does not exist or is no longer public (404)."}'::jsonb
      ELSE p END
    ORDER BY ord)
  FROM jsonb_array_elements("problems") WITH ORDINALITY AS e(p, ord)
)
WHERE "problems" @> '[{"code":"repository-private"}]';--> statement-breakpoint
UPDATE "crawl_reports" SET "errors" = (
  SELECT jsonb_agg(
    CASE WHEN p->>'code' = 'repository-private'
      THEN p || '{"code":"repository-not-found","message":"The repository does not exist or is no longer public (404)."}'::jsonb
      ELSE p END
    ORDER BY ord)
  FROM jsonb_array_elements("errors") WITH ORDINALITY AS e(p, ord)
)
WHERE "errors" @> '[{"code":"repository-private"}]';
