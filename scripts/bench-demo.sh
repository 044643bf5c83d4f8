#!/usr/bin/env bash
# Set up (if needed), then benchmark a shipped scenario on the embedded results store
# (results/bench.db; no worker, no API key). Three runs go into one batch:
#   local  - a real small model (SmolLM2-135M served by llama.cpp on loopback) in the tool loop
#   oracle - applies the scenario's reference solution: the ceiling
#   echo   - changes nothing: the floor
# and the batch is shown. Usage: bash scripts/bench-demo.sh [SUITE SCENARIO]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
suite=${1:-py-bugs}
scenario=${2:-pagination-off-by-one}
batch="demo-$(date -u +%Y%m%d-%H%M%S)"
.venv/bin/bench "$suite" "$scenario" --tier L1 --agent local --max-turns 6 --batch-id "$batch"
.venv/bin/bench "$suite" "$scenario" --tier L1 --agent oracle --batch-id "$batch"
.venv/bin/bench "$suite" "$scenario" --tier L1 --agent echo --batch-id "$batch"
.venv/bin/bench batch "$batch"
