#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Used by .ci/run.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "setup failed" >&2; exit 1; }
.venv/bin/python -m pytest -ra "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$status"
