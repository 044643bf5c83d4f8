#!/usr/bin/env bash
# Install wrangler 3.72.1 (which carries workerd and Pyodide, so Python Workers run offline
# under Node 20) into .wrangler/cli/ (gitignored). Used by the workerd integration test.
# Without npm this prints why and exits 0: the test then skips with the same reason.
set -uo pipefail
cd "$(dirname "$0")/.."
VERSION=3.72.1
DEST=.wrangler/cli
BIN="$DEST/node_modules/.bin/wrangler"
if ! command -v npm >/dev/null 2>&1; then
  echo "install-wrangler: npm not found; the workerd integration test will be skipped" >&2
  exit 0
fi
if [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -q "$VERSION"; then
  exit 0
fi
mkdir -p "$DEST"
if ! npm install --prefix "$DEST" --no-audit --no-fund --loglevel=error "wrangler@$VERSION" >/dev/null; then
  echo "install-wrangler: npm install wrangler@$VERSION failed; the workerd integration test will be skipped" >&2
  exit 0
fi
