-- Live progress of batches being run: one row per invocation (one `bench` process writing into
-- a batch), rewritten in place by its heartbeats (worker/progress.py). `sequence` orders an
-- invocation's reports, so a late or repeated one never replaces a newer one; `updated_at` is
-- the worker's clock when the newest arrived, from which a killed invocation is told (stale).

CREATE TABLE IF NOT EXISTS batch_progress (
    batch_id      TEXT NOT NULL REFERENCES batches (batch_id),
    invocation_id TEXT NOT NULL,
    sequence      INTEGER NOT NULL,
    state         TEXT NOT NULL,
    planned_cells INTEGER,
    cells         INTEGER NOT NULL,
    done          INTEGER NOT NULL,
    running       INTEGER NOT NULL,
    elapsed_ms    INTEGER NOT NULL,
    started_at    INTEGER,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (batch_id, invocation_id)
);
