#!/usr/bin/env bash
# Conformance: a person on the official ACP TypeScript SDK DMs our agent. Three processes on
# 127.0.0.1, each started from the command line: `acp-group server --tls`; the agent dave, made
# with `id create`, joined with `join` (its config naming owner.<domain> as its owner) and running
# with `run`; and the SDK's own client as owner.<domain>, which creates a session, invites dave,
# sends "Dave, can you hear me?" with the SDK's `send` and must get dave's answer in that session
# within 5 s. Then the same from a stranger's identity must get no answer (dave's standalone
# default policy is allowlist), and dave's log must say why and hold no dispatch for it.
#
# The SDK is not part of this project: this script needs the conformance kit (the SDK's source and
# its witness scripts) in ../shared/conformance beside the clone (CI has it there), or in
# $ACP_CONFORMANCE_DIR. Without it the script says so loudly and exits 2 — it never passes.
#
#   bash scripts/conformance/sdk-dm.sh      → exit 0: both held; 1: one did not; 2: no kit
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
kit="${ACP_CONFORMANCE_DIR:-$here/../shared/conformance}"
loud() { printf '\n%s\n%s\n%s\n\n' "==================== CONFORMANCE NOT RUN ====================" "$1" "============================================================" >&2; }
if [ ! -f "$kit/sdk-dm.mjs" ] || [ ! -f "$kit/build.sh" ] || [ ! -f "$kit/dns-shim.mjs" ]; then
  loud "sdk-dm: the official SDK conformance kit is missing (looked in $kit): NOTHING WAS CHECKED. Put it at ../shared/conformance or set ACP_CONFORMANCE_DIR."
  exit 2
fi
node_bin="${NODE:-node}"
domain="${CONFORMANCE_DOMAIN:-acp.local}"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-conformance-dm-XXXXXX")"
server_pid=""
dave_pid=""
cleanup() {
  [ -n "$dave_pid" ] && kill "$dave_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

say() { echo "sdk-dm.sh: $*"; }
acp() { "$node_bin" "$here/bin/acp-group.mjs" "$@"; }
fail() { say "FAIL: $1"; shift; for f in "$@"; do echo "--- $f" >&2; cat "$f" >&2 || true; done; exit 1; }
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
say "work dir $work (removed at exit, with the server and the agent started here)"

# 1. The local network: TLS from its own CA, the lobby of config/demo.json, any free port.
# Started as the command itself (not through a function), so $! is the process and the cleanup's kill stops it.
"$node_bin" "$here/bin/acp-group.mjs" server --tls --domain "$domain" --state-dir "$work/server" --config "$here/config/demo.json" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
wait_line "$work/server.out" 60 '^join lobby: ' >/dev/null || fail "the server printed no join link" "$work/server.out" "$work/server.err"
port="$(grep -m1 '^access point: ' "$work/server.out")"
port="${port##*:}"
ca="$(grep -m1 '^ca: ' "$work/server.out" | sed 's/^ca: //')"
link="$(grep -m1 '^join lobby: ' "$work/server.out" | sed 's/^join lobby: //')"
say "server on port $port, ca $ca"

# 2. dave: an identity from the local CA, joined to the lobby, its owner owner.<domain>, running.
# The names of the issue: every run has its own network, state and SDK storage, so nothing collides.
dave="dave.$domain"
owner="owner"
acp id create "$dave" --ap-url "https://127.0.0.1:$port" --ca-file "$ca" --no-passphrase --state-dir "$work/dave" >"$work/dave-setup.out" 2>&1 || fail "id create $dave" "$work/dave-setup.out"
acp join "$link" --identity "$dave" --config "$work/dave.json" --state-dir "$work/dave" >>"$work/dave-setup.out" 2>&1 || fail "join" "$work/dave-setup.out"
"$node_bin" -e '
  const fs = require("fs"); const [file, aid, owner] = process.argv.slice(1);
  const c = JSON.parse(fs.readFileSync(file, "utf8"));
  const id = Object.keys(c.identities).find((k) => c.identities[k].aid === aid);
  c.identities[id].owner = owner;
  fs.writeFileSync(file, JSON.stringify(c, null, 2));
' "$work/dave.json" "$dave" "$owner.$domain"
say "$dave joined the lobby; its config names $owner.$domain as owner (no dmPolicy: the standalone default, allowlist):"
"$node_bin" -e 'const c = require(process.argv[1]); console.log(JSON.stringify(c.identities, null, 2))' "$work/dave.json"
"$node_bin" "$here/bin/acp-group.mjs" run --config "$work/dave.json" --no-stdin --log-level info >"$work/dave.out" 2>"$work/dave.log" &
dave_pid=$!
wait_line "$work/dave.out" 60 '^agents online: ' >/dev/null || fail "dave did not come online" "$work/dave.out" "$work/dave.log"
say "dave online: $(grep -m1 '^agents online: ' "$work/dave.out")"

sdk() { SHIM_DOMAIN="$domain" NODE_EXTRA_CA_CERTS="$ca" "$node_bin" --import "$kit/dns-shim.mjs" "$kit/sdk-dm.mjs" --dist "$dist" --ap "$domain:$port" --domain "$domain" --to "$dave" --say "Dave, can you hear me?" "$@"; }

# 3. The owner on the official SDK: create_session_req → invite_agent_req → send → dave's answer in that session.
status=0
sdk --me "$owner" --expect-reply --timeout-ms 30000 >"$work/owner.out" 2>"$work/owner.err" || status=$?
cat "$work/owner.out"
[ "$status" -eq 0 ] && grep -q "sdk-dm: ok: $dave answered: " "$work/owner.out" || fail "the owner's DM got no answer from $dave (exit $status)" "$work/owner.err" "$work/dave.out" "$work/dave.log"
# "Within a few seconds": the answer must come within 5 s of the SDK's send.
ms="$(grep -m1 -oE 'answer came [0-9]+ ms' "$work/owner.out" | grep -oE '[0-9]+')"
[ -n "$ms" ] && [ "$ms" -le 5000 ] || fail "dave's answer took ${ms:-?} ms (more than 5000)" "$work/owner.out" "$work/dave.log"
say "PASS: $owner.$domain (official SDK) DMed $dave and got its answer in the same session, $ms ms after the send"

# 4. A stranger on the official SDK: no answer in 5 s, and dave's log says why.
stranger="stranger"
status=0
sdk --me "$stranger" --expect-silence-ms 5000 >"$work/stranger.out" 2>"$work/stranger.err" || status=$?
cat "$work/stranger.out"
[ "$status" -eq 0 ] && grep -q "sdk-dm: ok: no answer from $dave" "$work/stranger.out" || fail "the stranger's DM was answered (exit $status)" "$work/stranger.err" "$work/dave.out"
why="$(grep -m1 '"event":"direct.refused"' "$work/dave.log" | grep "$stranger.$domain" || true)"
[ -n "$why" ] || fail "dave's log does not say why $stranger.$domain was refused" "$work/dave.log"
say "dave's log: $why"
# No model answer: the owner's DM has its dispatch line in the log, the stranger's has none.
grep '"event":"monitor.dispatch"' "$work/dave.log" | grep -q "\"direct\":\"$owner.$domain\"" || fail "dave's log has no dispatch line for the owner's DM (is monitor.dispatch logged?)" "$work/dave.log"
if grep '"event":"monitor.dispatch"' "$work/dave.log" | grep -q "$stranger.$domain"; then fail "dave dispatched the stranger's DM" "$work/dave.log"; fi
say "dave's log: one dispatch for $owner.$domain, none for $stranger.$domain"
say "PASS: $stranger.$domain (official SDK) got no answer under the standalone default (allowlist), and dave's log says why"
echo "--- dave's transcript"
cat "$work/dave.out"
exit 0
