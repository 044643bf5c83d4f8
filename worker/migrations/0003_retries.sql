-- A run that redoes an earlier attempt (`bench --retry-errors`) names it in metadata.retryOf;
-- the column makes "attempts that count" one indexed lookup: aggregates and breakdowns leave
-- out every run that a later run of the store redid. The earlier attempt stays stored and listed.

ALTER TABLE runs ADD COLUMN retry_of TEXT;

CREATE INDEX IF NOT EXISTS idx_runs_retry_of ON runs (retry_of);

UPDATE runs SET retry_of = json_extract(metadata, '$.retryOf')
WHERE json_valid(metadata) AND json_type(metadata, '$.retryOf') = 'text';
