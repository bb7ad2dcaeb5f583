#!/usr/bin/env bash
# Conformance: the official ACP TypeScript SDK's own group event handler, joined to a group on
# `acp-group server --tls`, must see a person join that group through `acp-group chat`.
#
# The SDK is not part of this project: this script needs the conformance kit (the SDK's source
# and its witness scripts) in ../shared/conformance beside the clone (CI has it there), or in
# $ACP_CONFORMANCE_DIR. Without it the script says so loudly and exits 2 — it never passes.
#
#   bash scripts/conformance/sdk-events.sh        → exit 0: the SDK saw the join; 1: it did not; 2: no kit
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
kit="${ACP_CONFORMANCE_DIR:-$here/../shared/conformance}"
loud() { printf '\n%s\n%s\n%s\n\n' "==================== CONFORMANCE NOT RUN ====================" "$1" "============================================================" >&2; }
if [ ! -f "$kit/sdk-events.mjs" ] || [ ! -f "$kit/build.sh" ] || [ ! -f "$kit/dns-shim.mjs" ]; then
  loud "sdk-events: the official SDK conformance kit is missing (looked in $kit): NOTHING WAS CHECKED. Put it at ../shared/conformance or set ACP_CONFORMANCE_DIR."
  exit 2
fi
node_bin="${NODE:-node}"
domain="${CONFORMANCE_DOMAIN:-acp.local}"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-conformance-XXXXXX")"
server_pid=""
sdk_pid=""
cleanup() {
  [ -n "$sdk_pid" ] && kill "$sdk_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

say() { echo "sdk-events.sh: $*"; }
acp() { "$node_bin" "$here/bin/acp-group.mjs" "$@"; }
# Waits up to $2 seconds for a line matching $3 in file $1; prints the first match.
wait_line() {
  local file="$1" secs="$2" pattern="$3" i
  for ((i = 0; i < secs * 10; i++)); do
    if grep -m1 -E "$pattern" "$file" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# One build at a time: other conformance tests build the same cache folder (flock where there is one).
lock="$(dirname "$(mktemp -u)")/acp-ts-build.lock"
if command -v flock >/dev/null 2>&1; then dist="$(flock "$lock" bash "$kit/build.sh")"; else dist="$(bash "$kit/build.sh")"; fi
say "official SDK built at $dist"

# The local network: TLS from its own CA, the lobby of config/demo.json, any free port.
"$node_bin" "$here/bin/acp-group.mjs" server --tls --domain "$domain" --state-dir "$work/server" --config "$here/config/demo.json" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
if ! wait_line "$work/server.out" 60 '^join lobby: ' >/dev/null; then
  say "FAIL: the server printed no join link"; cat "$work/server.out" "$work/server.err" >&2; exit 1
fi
ap_line="$(grep -m1 '^access point: ' "$work/server.out")"
port="${ap_line##*:}"
ca="$(grep -m1 '^ca: ' "$work/server.out" | sed 's/^ca: //')"
link="$(grep -m1 '^join lobby: ' "$work/server.out" | sed 's/^join lobby: //')"
say "server on port $port, ca $ca, link $link"

# The SDK member with its own event handler, waiting for the person to join.
person="dana$RANDOM.$domain"
SHIM_DOMAIN="$domain" NODE_EXTRA_CA_CERTS="$ca" "$node_bin" --import "$kit/dns-shim.mjs" "$kit/sdk-events.mjs" \
  --dist "$dist" --ap "$domain:$port" --domain "$domain" --link "$link" --expect-join "$person" --timeout-ms 120000 \
  >"$work/sdk.out" 2>"$work/sdk.err" &
sdk_pid=$!
if ! wait_line "$work/sdk.out" 90 'sdk-events: waiting for|sdk-events FAIL' >/dev/null || grep -q 'sdk-events FAIL' "$work/sdk.out"; then
  say "FAIL: the SDK member did not get ready"; cat "$work/sdk.out" "$work/sdk.err" >&2; exit 1
fi

# The person: an identity from the local CA, then `chat` by the link (joins, says one line, leaves).
acp id create "$person" --ap-url "https://127.0.0.1:$port" --ca-file "$ca" --no-passphrase --state-dir "$work/person" >"$work/person.out" 2>&1 \
  || { say "FAIL: id create"; cat "$work/person.out" >&2; exit 1; }
acp chat "$link" --identity "$person" --state-dir "$work/person" --ca-file "$ca" --say "hello from $person" --no-stdin --duration-ms 2000 >>"$work/person.out" 2>&1 \
  || { say "FAIL: chat"; cat "$work/person.out" >&2; exit 1; }
say "$person joined through acp-group chat: $(grep -m1 ' in \[lobby\]' "$work/person.out" || echo '?')"

status=0
wait "$sdk_pid" || status=$?
sdk_pid=""
cat "$work/sdk.out"
if [ "$status" -eq 0 ] && grep -q "sdk-events: ok: saw $person join" "$work/sdk.out"; then
  say "PASS: the official SDK's group event handler saw $person join"
  exit 0
fi
say "FAIL: the official SDK's group event handler did not see $person join (exit $status)"
cat "$work/sdk.err" >&2
exit 1
