-- Dataset ingest results, one row per (ingest_type, base_url): the sandcrawler spec's table with its
-- typo fixed (the CHECK on item_bundle_path named a non-existent column item_path_bundle).
-- PostgreSQL form; ingest_assets/datasets/results.py declares the same table for SQLAlchemy (SQLite and
-- PostgreSQL), and a test compares the two.
CREATE TABLE IF NOT EXISTS ingest_fileset_result (
    ingest_type             TEXT NOT NULL CHECK (octet_length(ingest_type) >= 1),
    base_url                TEXT NOT NULL CHECK (octet_length(base_url) >= 1),
    updated                 TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
    hit                     BOOLEAN NOT NULL,
    status                  TEXT CHECK (octet_length(status) >= 1),
    terminal_url            TEXT CHECK (octet_length(terminal_url) >= 1),
    terminal_dt             TEXT CHECK (octet_length(terminal_dt) = 14),
    terminal_status_code    INT,
    terminal_sha1hex        TEXT CHECK (octet_length(terminal_sha1hex) = 40),
    platform                TEXT CHECK (octet_length(platform) >= 1),
    platform_domain         TEXT CHECK (octet_length(platform_domain) >= 1),
    platform_id             TEXT CHECK (octet_length(platform_id) >= 1),
    ingest_strategy         TEXT CHECK (octet_length(ingest_strategy) >= 1),
    total_size              BIGINT,
    file_count              INT,
    item_name               TEXT CHECK (octet_length(item_name) >= 1),
    item_bundle_path        TEXT CHECK (octet_length(item_bundle_path) >= 1),
    -- list of files, like a fatcat fileset manifest: status, path, size, md5, sha1, sha256, mimetype,
    -- platform_url, terminal_url, terminal_dt, extra
    manifest                JSONB,
    PRIMARY KEY (ingest_type, base_url)
);
CREATE INDEX IF NOT EXISTS ingest_fileset_result_terminal_url_idx ON ingest_fileset_result(terminal_url);
