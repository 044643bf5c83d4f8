-- Load tests of model endpoints (`bench stress`): one row per test, with its configuration,
-- its summary (knee, breaking point, resilience) and its steps as JSON text.
--
-- D1 statements stay far below its 100 KB limit: the API caps config at 16 KB and summary at
-- 32 KB, and the steps' JSON is split in chunks of at most 45,000 bytes: the first in
-- stress_runs.steps, any further ones in stress_run_steps (steps_chunks counts them all).

CREATE TABLE IF NOT EXISTS stress_runs (
    id           TEXT PRIMARY KEY,
    created_at   INTEGER NOT NULL,
    started_at   TEXT,
    completed_at TEXT,
    provider     TEXT NOT NULL,
    model        TEXT NOT NULL,
    profile      TEXT NOT NULL,
    status       TEXT NOT NULL,
    config       TEXT NOT NULL DEFAULT '{}',
    summary      TEXT NOT NULL DEFAULT '{}',
    steps        TEXT NOT NULL DEFAULT '[]',
    steps_chunks INTEGER NOT NULL DEFAULT 1,
    content_hash TEXT NOT NULL
);

-- One index per filter of GET /api/stress, each ending in the list order.
CREATE INDEX IF NOT EXISTS idx_stress_created ON stress_runs (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS idx_stress_provider ON stress_runs (provider, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS idx_stress_model ON stress_runs (model, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS idx_stress_profile ON stress_runs (profile, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS idx_stress_status ON stress_runs (status, created_at DESC, id DESC);

CREATE TABLE IF NOT EXISTS stress_run_steps (
    stress_id   TEXT NOT NULL REFERENCES stress_runs (id),
    chunk_index INTEGER NOT NULL,
    content     TEXT NOT NULL,
    PRIMARY KEY (stress_id, chunk_index)
);
