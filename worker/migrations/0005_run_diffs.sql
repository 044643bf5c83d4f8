-- The workspace diff of a run (unified diff text, capped by the harness), stored apart from the
-- run like its transcript and in chunks of at most 90,000 bytes, far below D1's row limit.

CREATE TABLE IF NOT EXISTS run_diffs (
    run_id      TEXT NOT NULL REFERENCES runs (run_id),
    chunk_index INTEGER NOT NULL,
    content     TEXT NOT NULL,
    PRIMARY KEY (run_id, chunk_index)
);
