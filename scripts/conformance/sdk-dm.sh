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
name=sdk-dm.sh needs="sdk-dm.mjs build.sh dns-shim.mjs"
source "$(dirname "$0")/lib.sh"

# 1. The local network: TLS from its own CA, the lobby of config/demo.json, any free port.
bg acp server --tls --domain "$domain" --state-dir "$work/server" --config "$here/config/demo.json" >"$work/server.out" 2>"$work/server.err" &
pids+=($!)
wait_line "$work/server.out" 60 '^join lobby: ' >/dev/null || fail "the server printed no join link" server.out server.err
port="$(grep -m1 '^access point: ' "$work/server.out")"
port="${port##*:}"
ca="$(grep -m1 '^ca: ' "$work/server.out" | sed 's/^ca: //')"
link="$(grep -m1 '^join lobby: ' "$work/server.out" | sed 's/^join lobby: //')"
say "server on port $port, ca $ca"

# 2. dave: an identity from the local CA, joined to the lobby, its owner owner.<domain>, running.
# The names of the issue: every run has its own network, state and SDK storage, so nothing collides.
dave="dave.$domain"
owner="owner"
acp id create "$dave" --ap-url "https://127.0.0.1:$port" --ca-file "$ca" --no-passphrase --state-dir "$work/dave" >"$work/dave-setup.out" 2>&1 || fail "id create $dave" dave-setup.out
acp join "$link" --identity "$dave" --config "$work/dave.json" --state-dir "$work/dave" >>"$work/dave-setup.out" 2>&1 || fail "join" dave-setup.out
"$node_bin" -e '
  const fs = require("fs"); const [file, aid, owner] = process.argv.slice(1);
  const c = JSON.parse(fs.readFileSync(file, "utf8"));
  const id = Object.keys(c.identities).find((k) => c.identities[k].aid === aid);
  c.identities[id].owner = owner;
  fs.writeFileSync(file, JSON.stringify(c, null, 2));
' "$work/dave.json" "$dave" "$owner.$domain"
say "$dave joined the lobby; its config names $owner.$domain as owner (no dmPolicy: the standalone default, allowlist):"
"$node_bin" -e 'const c = require(process.argv[1]); console.log(JSON.stringify(c.identities, null, 2))' "$work/dave.json"
bg acp run --config "$work/dave.json" --no-stdin --log-level info >"$work/dave.out" 2>"$work/dave.log" &
pids+=($!)
wait_line "$work/dave.out" 60 '^agents online: ' >/dev/null || fail "dave did not come online" dave.out dave.log
say "dave online: $(grep -m1 '^agents online: ' "$work/dave.out")"

sdk() { SHIM_DOMAIN="$domain" NODE_EXTRA_CA_CERTS="$ca" "$node_bin" --import "$kit/dns-shim.mjs" "$kit/sdk-dm.mjs" --dist "$dist" --ap "$domain:$port" --domain "$domain" --to "$dave" --say "Dave, can you hear me?" "$@"; }

# 3. The owner on the official SDK: create_session_req → invite_agent_req → send → dave's answer in that session.
status=0
sdk --me "$owner" --expect-reply --timeout-ms 30000 >"$work/owner.out" 2>"$work/owner.err" || status=$?
cat "$work/owner.out"
[ "$status" -eq 0 ] && grep -q "sdk-dm: ok: $dave answered: " "$work/owner.out" || fail "the owner's DM got no answer from $dave (exit $status)" owner.err dave.out dave.log
# "Within a few seconds": the answer must come within 5 s of the SDK's send.
ms="$(grep -m1 -oE 'answer came [0-9]+ ms' "$work/owner.out" | grep -oE '[0-9]+')"
[ -n "$ms" ] && [ "$ms" -le 5000 ] || fail "dave's answer took ${ms:-?} ms (more than 5000)" owner.out dave.log
say "PASS: $owner.$domain (official SDK) DMed $dave and got its answer in the same session, $ms ms after the send"

# 4. A stranger on the official SDK: no answer in 5 s, and dave's log says why.
stranger="stranger"
status=0
sdk --me "$stranger" --expect-silence-ms 5000 >"$work/stranger.out" 2>"$work/stranger.err" || status=$?
cat "$work/stranger.out"
[ "$status" -eq 0 ] && grep -q "sdk-dm: ok: no answer from $dave" "$work/stranger.out" || fail "the stranger's DM was answered (exit $status)" stranger.err dave.out
why="$(grep -m1 '"event":"direct.refused"' "$work/dave.log" | grep "$stranger.$domain" || true)"
[ -n "$why" ] || fail "dave's log does not say why $stranger.$domain was refused" dave.log
say "dave's log: $why"
# No model answer: the owner's DM has its dispatch line in the log, the stranger's has none.
grep '"event":"monitor.dispatch"' "$work/dave.log" | grep -q "\"direct\":\"$owner.$domain\"" || fail "dave's log has no dispatch line for the owner's DM (is monitor.dispatch logged?)" dave.log
if grep '"event":"monitor.dispatch"' "$work/dave.log" | grep -q "$stranger.$domain"; then fail "dave dispatched the stranger's DM" dave.log; fi
say "dave's log: one dispatch for $owner.$domain, none for $stranger.$domain"
say "PASS: $stranger.$domain (official SDK) got no answer under the standalone default (allowlist), and dave's log says why"
echo "--- dave's transcript"
cat "$work/dave.out"
exit 0
