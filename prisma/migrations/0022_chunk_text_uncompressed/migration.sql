-- A chunk's text and full-text vector are stored without compression (issue 15). A row of
-- document_chunks is over PostgreSQL's 2 kB TOAST threshold (a 384-dimension embedding alone is
-- 1.5 kB), so every insert ran pglz over both values before moving them out of line. PGlite is
-- built without lz4, and pglz in WebAssembly cost about 60 µs of the engine's one thread per stored
-- chunk, a tenth of it with every index (570 against 510 µs; without the HNSW index 250 against
-- 145 µs for 500 words of English), measured with the indexer's rows. The tsvector never shrank, so
-- that attempt was wasted; the text shrank to two thirds for English prose. The cost is disk: the
-- table (not its indexes) grew by a fifth to a third in the same measurement. EXTERNAL still moves
-- large values out of line. Applies to rows written from now on; rows already stored keep their form.
ALTER TABLE document_chunks ALTER COLUMN text SET STORAGE EXTERNAL, ALTER COLUMN tsv SET STORAGE EXTERNAL;
