#!/usr/bin/env bash
# npm run test:host — the package in the real OpenClaw host:
#   1. install Node 24 + openclaw@2026.9.6 into the cache dir (skipped when present)
#   2. strict type-check of the plugin entry against the host's .d.ts
#   3. the committed openclaw.plugin.json is what scripts/gen-manifest.ts generates
#   4. the plugin: `npm pack` and `openclaw plugins install npm-pack:<tarball>`, then `plugins
#      inspect` says loaded (scripts/host/plugin-install.sh) — the package users install
#   5. the host's config validation and ours agree on channels.acp-group
#   6. the end-to-end proof (scripts/host/e2e.ts), with the installed package
#   7. setup (flags, and guided on a terminal through tmux), doctor, status and tool policy
#      (scripts/host/admin.ts), the packed tarball installed
#      into a fresh state (needs step 4's tarball: skipped with ACP_PLUGIN_SOURCE=checkout)
# OPENCLAW_HOST_DIR overrides the cache dir. ACP_PLUGIN_SOURCE=checkout loads this checkout's
# folder instead of the installed tarball (after `npm run build`; quicker while developing);
# ACP_PLUGIN_DIR loads the plugin from another root.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NODE="$REPO/node_modules/.bin/node"
cd "$REPO"
echo "== host: install";        bash scripts/host/install.sh
echo "== host: typecheck";      bash scripts/host/typecheck.sh
echo "== host: manifest";       "$NODE" scripts/gen-manifest.ts --check
if [ -n "${ACP_PLUGIN_DIR:-}" ]; then
  echo "== host: plugin from ACP_PLUGIN_DIR=$ACP_PLUGIN_DIR"
elif [ "${ACP_PLUGIN_SOURCE:-installed}" = "checkout" ]; then
  echo "== host: plugin from the checkout"; npm run build
else
  echo "== host: plugin tarball"; bash scripts/host/plugin-install.sh
fi
echo "== host: config";         "$NODE" scripts/host/config-check.ts
echo "== host: end to end";     "$NODE" scripts/host/e2e.ts
if [ -z "${ACP_PLUGIN_DIR:-}" ] && [ "${ACP_PLUGIN_SOURCE:-installed}" != "checkout" ]; then
  echo "== host: setup and doctor"; "$NODE" scripts/host/admin.ts
fi
