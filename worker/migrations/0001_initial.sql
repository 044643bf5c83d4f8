-- Results store: batches, runs, evaluations, telemetry and transcripts.
-- Applied by `wrangler d1 migrations apply` on Cloudflare and by `worker migrate` locally;
-- both record applied files in the d1_migrations table.

CREATE TABLE IF NOT EXISTS batches (
    batch_id     TEXT PRIMARY KEY,
    created_at   INTEGER NOT NULL,
    completed_at INTEGER,
    metadata     TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX IF NOT EXISTS idx_batches_created ON batches (created_at DESC, batch_id DESC);

CREATE TABLE IF NOT EXISTS runs (
    run_id             TEXT PRIMARY KEY,
    batch_id           TEXT REFERENCES batches (batch_id),
    suite              TEXT NOT NULL,
    scenario           TEXT NOT NULL,
    tier               TEXT NOT NULL,
    agent              TEXT NOT NULL,
    model              TEXT,
    status             TEXT NOT NULL,
    failure_class      TEXT,
    started_at         TEXT,
    completed_at       TEXT,
    total_score        REAL,
    weighted_score     REAL,
    is_successful      INTEGER NOT NULL DEFAULT 0,
    success_metric     REAL,
    specialist_enabled INTEGER NOT NULL DEFAULT 0,
    specialist_name    TEXT,
    specialist_version TEXT,
    config_hash        TEXT,
    metadata           TEXT NOT NULL DEFAULT '{}',
    content_hash       TEXT NOT NULL,
    created_at         INTEGER NOT NULL
);

-- One index per filter of GET /api/runs, each ending in the list order so that a filtered,
-- paginated list is a range scan.
CREATE INDEX IF NOT EXISTS idx_runs_created ON runs (created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_batch ON runs (batch_id, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_suite ON runs (suite, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_scenario ON runs (scenario, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_agent ON runs (agent, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_model ON runs (model, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_tier ON runs (tier, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_status ON runs (status, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_specialist ON runs (specialist_name, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_specialist_enabled ON runs (specialist_enabled, created_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS idx_runs_config_hash ON runs (config_hash, created_at DESC, run_id DESC);

CREATE TABLE IF NOT EXISTS evaluations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id         TEXT NOT NULL REFERENCES runs (run_id),
    position       INTEGER NOT NULL,
    evaluator_name TEXT NOT NULL,
    score          REAL NOT NULL,
    max_score      REAL NOT NULL,
    status         TEXT NOT NULL,
    details        TEXT,
    created_at     TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS idx_evaluations_run ON evaluations (run_id, position);

CREATE TABLE IF NOT EXISTS telemetry (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id             TEXT NOT NULL UNIQUE REFERENCES runs (run_id),
    tool_calls         INTEGER NOT NULL DEFAULT 0,
    tokens_in          INTEGER NOT NULL DEFAULT 0,
    tokens_out         INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    judge_tokens_in    INTEGER NOT NULL DEFAULT 0,
    judge_tokens_out   INTEGER NOT NULL DEFAULT 0,
    judge_cost_usd     REAL,
    turns              INTEGER NOT NULL DEFAULT 0,
    duration_ms        REAL NOT NULL DEFAULT 0,
    latencies_ms       TEXT NOT NULL DEFAULT '[]',
    workspace_dir      TEXT
);

-- A transcript is stored in chunks so that no row comes near D1's row size limit.
CREATE TABLE IF NOT EXISTS transcripts (
    run_id      TEXT NOT NULL REFERENCES runs (run_id),
    chunk_index INTEGER NOT NULL,
    content     TEXT NOT NULL,
    truncated   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, chunk_index)
);
