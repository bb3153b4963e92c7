-- Documents: one record per uploaded file (the bytes live in object storage,
-- see lib/storage). Index columns are written by the indexer (issue 7).

CREATE TABLE documents (
  id                   text PRIMARY KEY,
  org_id               text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  title                text NOT NULL,
  description          text NOT NULL DEFAULT '',
  tags                 text[] NOT NULL DEFAULT '{}',
  -- Display name only, sanitized; never used to build a storage key.
  filename             text NOT NULL,
  content_type         text NOT NULL,
  extension            text NOT NULL CHECK (extension IN ('pdf', 'docx', 'txt', 'csv')),
  -- NULL until the first upload completes.
  size_bytes           bigint,
  checksum_sha256      text,
  storage_key          text,
  status               text NOT NULL DEFAULT 'created'
                       CHECK (status IN ('created', 'uploaded', 'indexing', 'indexed', 'failed')),
  status_reason        text,
  created_by           text NOT NULL,
  uploaded_by          text,
  uploaded_at          timestamptz(3),
  index_model          text,
  index_dims           integer,
  chunk_count          integer NOT NULL DEFAULT 0,
  index_progress_done  integer NOT NULL DEFAULT 0,
  index_progress_total integer NOT NULL DEFAULT 0,
  index_generation     integer NOT NULL DEFAULT 0,
  indexed_at           timestamptz(3),
  -- True when the file was replaced after it was indexed: the index describes older bytes.
  index_stale          boolean NOT NULL DEFAULT false,
  created_at           timestamptz(3) NOT NULL DEFAULT now(),
  updated_at           timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX documents_org_created_idx ON documents (org_id, created_at DESC, id DESC);
CREATE INDEX documents_org_status_idx ON documents (org_id, status);

ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE documents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON documents
  USING (org_id = quarry_current_org()) WITH CHECK (org_id = quarry_current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON documents TO quarry_app;
