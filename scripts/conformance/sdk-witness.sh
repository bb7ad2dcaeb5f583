#!/usr/bin/env bash
# Conformance, as a user meets it: the official ACP TypeScript SDK (acp-ts) is the witness, and
# every part is its own process started from the command line, on real sockets.
#
#   1. `acp-group server --tls` (its own CA; the lobby of config/demo.json; any free port).
#   2. The SDK creates dave.<domain> in its own layout (~/.acp-storage) under its default EMPTY seed
#      password, as an evol user has it.
#   3. `acp-group import-evol` imports it in one command and writes the config `run` takes.
#   4. `acp-group join <link>`, then `acp-group run --config …`: dave comes online in the lobby.
#   5. A member on the SDK (sdk-member.mjs) asks in the lobby; dave must answer there.
#   6. The SDK's own group event handler (sdk-events.mjs), joined to the lobby, must see a person
#      join through `acp-group id create` + `acp-group chat`.
#
# The SDK is not part of this project: the script needs the conformance kit (the SDK's source and
# its witness scripts) in ../shared/conformance beside the clone (CI has it there), or in
# $ACP_CONFORMANCE_DIR. Without it the script says so loudly and exits 2 — it never passes.
# The SDK's processes resolve names under the domain to 127.0.0.1 through the kit's dns shim (the
# SDK builds https://acp3.<domain> itself); ours use the address the server printed. No /etc/hosts.
#
#   bash scripts/conformance/sdk-witness.sh   → exit 0: every step held; 1: one did not (named); 2: no kit
# ACP_GROUP="npx acp-group" runs an installed package's command instead of this checkout's.
set -euo pipefail
name=sdk-witness needs="build.sh dns-shim.mjs sdk-dm.mjs sdk-member.mjs sdk-events.mjs"
source "$(dirname "$0")/lib.sh"
# The kit's scripts, as an SDK user runs them: the dns shim, and the server's CA trusted.
sdk() { SHIM_DOMAIN="$domain" NODE_EXTRA_CA_CERTS="$ca" "$node_bin" --import "$kit/dns-shim.mjs" "$kit/$1" --dist "$dist" --ap "$sdk_ap" --domain "$domain" "${@:2}"; }

# Everything the user has lives in the work dir: a HOME of its own (no evol config there), our state.
export HOME="$work/home"
export ACP_GROUP_STATE_DIR="$work/state"
unset ACP_SEED_PASSWORD OPENCLAW_CONFIG_PATH
mkdir -p "$HOME"

# 1. The local network.
bg acp server --tls --domain "$domain" --port 0 --state-dir "$work/net" --config "$here/config/demo.json" >"$work/server.out" 2>"$work/server.err" &
pids+=($!)
wait_line "$work/server.out" 60 '^sdk domain: ' >/dev/null || fail "the server printed no banner" server.out server.err
ap="$(grep -m1 '^access point: ' "$work/server.out" | sed 's/^access point: //')"
ca="$(grep -m1 '^ca: ' "$work/server.out" | sed 's/^ca: //')"
link="$(grep -m1 '^join lobby: ' "$work/server.out" | sed 's/^join lobby: //')"
sdk_ap="$(grep -m1 '^sdk domain: ' "$work/server.out" | sed 's/^sdk domain: //; s/ .*//')"
say "1. server: access point $ap, sdk domain $sdk_ap, lobby $link"

# 2. The evol user's identity, made by the SDK with its default (empty) seed password.
dave="dave.$domain"
sdk sdk-dm.mjs --me dave --base "$HOME/.acp-storage" --create-only >"$work/sdk-dm.out" 2>"$work/sdk-dm.err" \
  || fail "the SDK could not create $dave" sdk-dm.out sdk-dm.err
grep -q "sdk-dm: ok: $dave in the SDK's layout" "$work/sdk-dm.out" || fail "the SDK did not keep $dave in its layout" sdk-dm.out sdk-dm.err
say "2. $(grep -m1 'created in' "$work/sdk-dm.out" | sed 's/^sdk-dm: //')"

# 3. One command.
acp import-evol --config "$work/dave.json" --ap-url "$ap" --ca-file "$ca" >"$work/import.out" 2>"$work/import.err" \
  || fail "import-evol" import.out import.err
grep -q "^imported $dave from " "$work/import.out" || fail "import-evol did not import $dave" import.out import.err
say "3. acp-group import-evol: $(grep -m1 "^imported $dave" "$work/import.out" | cut -c1-160)…"

# 4. Joined and run.
acp join "$link" --identity "$dave" --config "$work/dave.json" >"$work/join.out" 2>"$work/join.err" || fail "join" join.out join.err
say "4. acp-group join: $(head -1 "$work/join.out")"
bg acp run --config "$work/dave.json" --no-stdin >"$work/run.out" 2>"$work/run.err" &
pids+=($!)
wait_line "$work/run.out" 60 '^agents online:' >/dev/null || fail "dave never came online" run.out run.err server.err
say "   acp-group run: $(grep -m1 '^agents online:' "$work/run.out")"

# 5. A member on the official SDK asks; dave answers in the lobby.
sdk sdk-member.mjs --link "$link" --say "Dave, are you there?" --expect-from "$dave" --timeout-ms 60000 >"$work/member.out" 2>"$work/member.err" \
  || fail "dave did not answer the SDK member in the lobby" member.out member.err run.out run.err
say "5. $(grep -m1 'sdk: ok: ' "$work/member.out" | sed 's/^sdk: //')"

# 6. The SDK's own group event handler, in the lobby, sees a person join through `acp-group chat`.
person="dana$RANDOM.$domain"
bg sdk sdk-events.mjs --link "$link" --expect-join "$person" --timeout-ms 120000 >"$work/events.out" 2>"$work/events.err" &
events_pid=$!
pids+=($events_pid)
if ! wait_line "$work/events.out" 90 'sdk-events: waiting for|sdk-events FAIL' >/dev/null || grep -q 'sdk-events FAIL' "$work/events.out"; then
  fail "the SDK's event handler did not get ready" events.out events.err
fi
acp id create "$person" --ap-url "$ap" --ca-file "$ca" --no-passphrase --state-dir "$work/person" >"$work/person.out" 2>&1 || fail "id create $person" person.out
acp chat "$link" --identity "$person" --state-dir "$work/person" --ca-file "$ca" --say "hello from $person" --no-stdin --duration-ms 2000 >>"$work/person.out" 2>&1 \
  || fail "chat as $person" person.out
say "6. $person joined through acp-group chat: $(grep -m1 ' in \[lobby\]' "$work/person.out" || echo '?')"
status=0
wait "$events_pid" || status=$?
[ "$status" -eq 0 ] && grep -q "sdk-events: ok: saw $person join" "$work/events.out" \
  || fail "the official SDK's group event handler did not see $person join (exit $status)" events.out events.err
say "   $(grep -m1 'sdk-events: ok: ' "$work/events.out" | sed 's/^sdk-events: //')"

say "PASS: an SDK-made identity (empty seed) imported in one command, joined, run, answered an SDK member in the lobby; the SDK's event handler saw $person join through acp-group chat"
