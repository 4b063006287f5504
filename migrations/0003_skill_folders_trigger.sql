-- Keeps skill_folders (folders holding two or more live skills) current in the same transaction as the
-- skill rows, whoever writes them (crawler, publish, tests). Statement-level triggers with transition
-- tables recompute only the repositories/collections a statement touched.
CREATE OR REPLACE FUNCTION atskills_recompute_folders(touched jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM skill_folders f
  USING jsonb_to_recordset(touched) AS t(source text, owner text, container text)
  WHERE f.source = t.source AND f.owner = t.owner AND f.container = t.container;

  INSERT INTO skill_folders (source, owner, container, path, name, visibility, skill_count, stars, revision)
  SELECT s.source, s.owner, s.container, p.path,
    CASE WHEN p.path = '' THEN s.container ELSE regexp_replace(p.path, '^.*/', '') END,
    s.visibility, count(*)::int, max(s.stars)::int,
    encode(sha256(convert_to(string_agg(s.identity || '@' || s.revision, E'\n' ORDER BY s.identity COLLATE "C"), 'UTF8')), 'hex')
  FROM skills s
  JOIN jsonb_to_recordset(touched) AS t(source text, owner text, container text)
    ON s.source = t.source AND s.owner = t.owner AND s.container = t.container
  CROSS JOIN LATERAL (
    SELECT array_to_string((string_to_array(s.path, '/'))[1:n], '/') AS path
    FROM generate_series(0, cardinality(string_to_array(s.path, '/')) - 1) AS n
  ) p
  WHERE s.gone_at IS NULL
  GROUP BY s.source, s.owner, s.container, p.path, s.visibility
  HAVING count(*) >= 2
  ON CONFLICT (source, owner, container, path) DO UPDATE
    SET name = excluded.name, visibility = excluded.visibility, skill_count = excluded.skill_count,
        stars = excluded.stars, revision = excluded.revision;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION atskills_folders_on_insert_or_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched jsonb;
BEGIN
  SELECT jsonb_agg(DISTINCT jsonb_build_object('source', source, 'owner', owner, 'container', container))
    INTO touched FROM changed_rows;
  IF touched IS NOT NULL THEN PERFORM atskills_recompute_folders(touched); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- An update only matters when it changes what a folder shows: liveness, revision, visibility or stars
-- (a re-crawl that only bumps last_seen_at recomputes nothing).
CREATE OR REPLACE FUNCTION atskills_folders_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched jsonb;
BEGIN
  SELECT jsonb_agg(DISTINCT jsonb_build_object('source', n.source, 'owner', n.owner, 'container', n.container))
    INTO touched
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE (o.gone_at IS NULL) <> (n.gone_at IS NULL) OR o.revision <> n.revision
     OR o.visibility <> n.visibility OR o.stars <> n.stars OR o.path <> n.path;
  IF touched IS NOT NULL THEN PERFORM atskills_recompute_folders(touched); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER skills_folders_insert AFTER INSERT ON skills
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION atskills_folders_on_insert_or_delete();
--> statement-breakpoint
CREATE TRIGGER skills_folders_delete AFTER DELETE ON skills
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION atskills_folders_on_insert_or_delete();
--> statement-breakpoint
CREATE TRIGGER skills_folders_update AFTER UPDATE ON skills
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION atskills_folders_on_update();
--> statement-breakpoint
-- Backfill for databases that already hold skills.
SELECT atskills_recompute_folders(
  (SELECT jsonb_agg(DISTINCT jsonb_build_object('source', source, 'owner', owner, 'container', container)) FROM skills)
) WHERE EXISTS (SELECT 1 FROM skills);
