#!/usr/bin/env bash
# The package as users get it, installed into the real host the way users install it:
#   1. `npm pack` of this checkout (prepack builds dist/) into a fresh folder
#   2. `openclaw plugins install npm-pack:<tarball> --force --accept-capabilities` into an isolated
#      OpenClaw state (HOME, OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH): the host's own managed npm
#      project, dependencies installed by the host, `openclaw` linked as the peer
#   3. `openclaw plugins inspect acp-group --runtime --json` must report it loaded from that install
#      (origin global, entry dist/plugin.js, channel acp-group)
# The installed package folder is written to $REPO/.cache/openclaw-plugin-dir, where
# scripts/host/host-env.ts (resolvePluginDir) finds it for the config check and the end-to-end test.
# Needs scripts/host/install.sh done. OPENCLAW_HOST_DIR as there.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${OPENCLAW_HOST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/acp-group-channel/openclaw-host}"
NODE="$DIR/node/bin/node"
OC="$DIR/host/node_modules/openclaw/openclaw.mjs"
[ -x "$NODE" ] && [ -f "$OC" ] || { echo "[plugin-install] no host at $DIR; run scripts/host/install.sh first" >&2; exit 1; }
DIR="$(cd "$DIR" && pwd)"
say() { printf '[plugin-install] %s\n' "$*"; }

# One install folder per checkout, so two checkouts on the same machine do not share one.
KEY="$(printf '%s' "$REPO" | sha1sum | cut -c1-12)"
ROOT="$DIR/plugin/$KEY"
mkdir -p "$DIR/plugin"
exec 9>"$DIR/plugin/.$KEY.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
# A failed run must not leave the previous install looking current.
rm -f "$REPO/.cache/openclaw-plugin-dir"
rm -rf "$ROOT"
mkdir -p "$ROOT/pack" "$ROOT/home" "$ROOT/state"

say "npm pack (prepack: npm run build)"
(cd "$REPO" && PATH="$REPO/node_modules/.bin:$PATH" npm pack --pack-destination "$ROOT/pack" --loglevel=error >/dev/null)
TGZ="$(ls "$ROOT"/pack/*.tgz)"
say "tarball: $TGZ ($(tar -tzf "$TGZ" | wc -l) files, $(stat -c %s "$TGZ") bytes)"

export HOME="$ROOT/home" OPENCLAW_STATE_DIR="$ROOT/state" OPENCLAW_CONFIG_PATH="$ROOT/state/openclaw.json"
export OPENCLAW_NO_AUTO_UPDATE=1 OPENCLAW_DISABLE_BONJOUR=1 NO_COLOR=1 FORCE_COLOR=0
printf '{ "gateway": { "mode": "local" }, "update": { "checkOnStart": false }, "models": { "catalogRefresh": { "enabled": false } } }\n' > "$OPENCLAW_CONFIG_PATH"
# --force: a local tarball is outside the host's review metadata and must be confirmed;
# --accept-capabilities: the consent the host asks for a third-party plugin (one channel, nothing else).
say "openclaw plugins install npm-pack:$TGZ --force --accept-capabilities"
"$NODE" "$OC" plugins install "npm-pack:$TGZ" --force --accept-capabilities 2>&1 | sed 's/^/  /'
"$NODE" "$OC" plugins inspect acp-group --runtime --json > "$ROOT/inspect.json" 2> "$ROOT/inspect.err" || {
  say "openclaw plugins inspect acp-group failed:"; cat "$ROOT/inspect.err" >&2; exit 1
}
PLUGIN_DIR="$("$NODE" -e '
const fs = require("node:fs");
const [file, state] = process.argv.slice(1);
const text = fs.readFileSync(file, "utf8");
const { plugin, install } = JSON.parse(text.slice(text.indexOf("{")));
const problems = [];
if (plugin?.status !== "loaded") problems.push(`status ${plugin?.status} (${plugin?.error ?? "no error given"})`);
if (plugin?.origin !== "global") problems.push(`origin ${plugin?.origin}, not the installed package`);
if (!String(plugin?.rootDir).startsWith(state + "/")) problems.push(`loaded from ${plugin?.rootDir}, outside the install`);
if (!String(plugin?.source).endsWith("/dist/plugin.js")) problems.push(`entry ${plugin?.source}`);
if (!plugin?.channelIds?.includes("acp-group")) problems.push(`channels ${JSON.stringify(plugin?.channelIds)}`);
if (problems.length) { console.error(problems.join("; ")); process.exit(1); }
console.error(`[plugin-install] inspect: status ${plugin.status}, origin ${plugin.origin}, ${install?.source ?? "?"} install of ${install?.resolvedSpec ?? "?"} (${install?.artifactKind ?? "?"}), entry ${plugin.source}`);
console.log(plugin.rootDir);
' "$ROOT/inspect.json" "$ROOT/state")"
mkdir -p "$REPO/.cache"
printf '%s\n' "$PLUGIN_DIR" > "$REPO/.cache/openclaw-plugin-dir"
say "installed: $PLUGIN_DIR"
