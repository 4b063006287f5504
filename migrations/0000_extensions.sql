-- Trigram similarity for typo-tolerant search on skill names (pg_trgm ships with Postgres and PGlite).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
