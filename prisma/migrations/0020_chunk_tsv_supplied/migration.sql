-- The full-text vector of a chunk may be supplied by its writer (issue 15). As a generated column,
-- to_tsvector('english', text) ran inside every write, on the one thread that stores the chunks: in
-- PGlite that was most of the store step (docs/search.md). The indexer now computes it beforehand
-- on another instance of the same engine (a second backend of the server; in embedded mode an
-- in-memory PGlite of the same package), so the lexemes are exactly what this database's
-- to_tsquery/websearch_to_tsquery match against, and sends it with the row.
--
-- A chunk is never written without its vector: the trigger fills it from the row's own text
-- whenever the writer supplies none (every other writer, and the indexer's fallback when its
-- calculator is unavailable), and again when the text changes without a new vector.
-- DROP EXPRESSION keeps the values already stored.
ALTER TABLE document_chunks ALTER COLUMN tsv DROP EXPRESSION;

CREATE FUNCTION document_chunks_fill_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.tsv IS NULL OR (TG_OP = 'UPDATE' AND NEW.text IS DISTINCT FROM OLD.text AND NEW.tsv IS NOT DISTINCT FROM OLD.tsv) THEN
    NEW.tsv := pg_catalog.to_tsvector('english'::pg_catalog.regconfig, NEW.text);
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER document_chunks_fill_tsv BEFORE INSERT OR UPDATE OF text, tsv ON document_chunks
  FOR EACH ROW EXECUTE FUNCTION document_chunks_fill_tsv();
