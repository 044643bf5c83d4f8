-- Batch metadata, one row per contribution (one `bench` invocation, one shard): any number of
-- writers share a batch id by inserting rows, never by rewriting one, so none loses another's
-- metadata. Reads merge the rows (worker/store.py, merge_batch_metadata).

CREATE TABLE IF NOT EXISTS batch_contributions (
    batch_id          TEXT NOT NULL REFERENCES batches (batch_id),
    contribution_hash TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    metadata          TEXT NOT NULL,
    PRIMARY KEY (batch_id, contribution_hash)
);
