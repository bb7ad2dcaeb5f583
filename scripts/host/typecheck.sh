#!/usr/bin/env bash
# Strict type-check of the plugin entry (src/plugin.ts), the secret contract (src/secret-contract-api.ts)
# and the host adapter (src/openclaw/*.ts)
# against the real OpenClaw host's .d.ts, as installed by scripts/host/install.sh. The project's own
# `npm run typecheck` sees only src/openclaw/sdk.d.ts (the host is an optional peer); this is
# the check that the shim's promises hold for the real host.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Outside the checkout, so that fresh clones on the same machine (CI) reuse the ~650 MB install.
DIR="${OPENCLAW_HOST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/acp-group-channel/openclaw-host}"
SDK="$DIR/host/node_modules/openclaw/dist/plugin-sdk"
[ -f "$SDK/channel-core.d.ts" ] || { echo "[host-typecheck] no host at $DIR; run scripts/host/install.sh first" >&2; exit 1; }
DIR="$(cd "$DIR" && pwd)"
CFG="$DIR/tsconfig.plugin.json"
# Generated so that OPENCLAW_HOST_DIR may point anywhere; paths follow the package's "exports" map.
cat > "$CFG" <<JSON
{
  "extends": "$REPO/tsconfig.json",
  "compilerOptions": {
    "paths": { "openclaw/plugin-sdk/*": ["$SDK/*.d.ts"] },
    "typeRoots": ["$REPO/node_modules/@types"],
    "skipLibCheck": true,
    "noEmit": true
  },
  "include": [],
  "files": ["$REPO/src/plugin.ts", "$REPO/src/secret-contract-api.ts", "$REPO/src/openclaw/host-calls.ts", "$REPO/src/openclaw/channel.ts"]
}
JSON
echo "[host-typecheck] tsc --strict: src/plugin.ts + src/openclaw/*.ts against openclaw@$("$DIR/node/bin/node" -p "require('$DIR/host/node_modules/openclaw/package.json').version") .d.ts"
PATH="$REPO/node_modules/.bin:$PATH" tsc -p "$CFG"
echo "[host-typecheck] ok"
