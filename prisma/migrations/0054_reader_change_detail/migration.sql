-- The reader change notice (migration 0048) names the table it is about, in its DETAIL, as
-- `schema.table` (format's %I quoting): the embedded analytics copies then take again only the tables
-- whose rows changed (lib/db/analytics-copy.ts), instead of the whole data folder and an engine
-- restart (about 7 s on a 2-core machine, issue 42). The message stays the same; a notice without
-- a detail (or one that names no reader table) still makes the copy whole again.
CREATE OR REPLACE FUNCTION quarry_reader_tables_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'quarry: reader tables changed' USING DETAIL = format('%I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME);
  RETURN NULL;
END $$;
