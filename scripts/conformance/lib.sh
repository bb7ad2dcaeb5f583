# Sourced by the conformance scripts (sdk-dm.sh, sdk-witness.sh): what each needs before its own
# steps. Set before sourcing:
#   name   the script's name in its messages (`$name: …`), and in its work dir's
#   needs  the files of the conformance kit it runs (space-separated)
# After: here (the checkout), kit, node_bin, domain, work (a fresh dir), dist (the SDK built), and
# say, wait_line, fail, bg. At exit every process started with `bg … &` (its pid added to `pids`)
# is stopped and the work dir removed.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
kit="${ACP_CONFORMANCE_DIR:-$here/../shared/conformance}"
loud() { printf '\n%s\n%s\n%s\n\n' "==================== CONFORMANCE NOT RUN ====================" "$1" "============================================================" >&2; }
for f in $needs; do
  if [ ! -f "$kit/$f" ]; then
    loud "$name: the official SDK conformance kit is missing or incomplete (no $f in $kit): NOTHING WAS CHECKED. Put it at ../shared/conformance or set ACP_CONFORMANCE_DIR."
    exit 2
  fi
done
node_bin="${NODE:-node}"
domain="${CONFORMANCE_DOMAIN:-acp.local}"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-$name-XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

say() { echo "$name: $*"; }
# Our command line: this checkout's, or the one named in $ACP_GROUP (an installed package).
acp() { if [ -n "${ACP_GROUP:-}" ]; then $ACP_GROUP "$@"; else "$node_bin" "$here/bin/acp-group.mjs" "$@"; fi; }
# `bg acp ARGS… &` or `bg sdk SCRIPT ARGS… &`: the backgrounded subshell becomes the process
# (exec), so $! is the process itself and the cleanup's kill stops it (a function run with & would
# leave it behind). The SDK's scripts run as an SDK user runs them: the dns shim, the server's CA
# trusted ($ca), at $sdk_ap.
bg() { if [ "$1" = sdk ]; then shift; SHIM_DOMAIN="$domain" NODE_EXTRA_CA_CERTS="$ca" exec "$node_bin" --import "$kit/dns-shim.mjs" "$kit/$1" --dist "$dist" --ap "$sdk_ap" --domain "$domain" "${@:2}";
  elif [ -n "${ACP_GROUP:-}" ]; then shift; exec $ACP_GROUP "$@"; else shift; exec "$node_bin" "$here/bin/acp-group.mjs" "$@"; fi; }
# Waits up to $2 seconds for a line matching $3 in file $1; prints the first match.
wait_line() {
  local file="$1" secs="$2" pattern="$3" i
  for ((i = 0; i < secs * 10; i++)); do
    if grep -m1 -E "$pattern" "$file" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}
# The witness's own defect: the SDK's key library (jsrsasign) writes about one EC key in seventy as
# an encrypted PKCS#8 it cannot read back itself ("私钥解密失败: malformed PBES2 format …"; Node's
# crypto reads the same file), so that SDK identity cannot sign in. When a step failed and an SDK
# process said so, the whole check runs again from the start with fresh identities (at most three
# attempts, each said loudly); any other failure fails at once.
script="$0"
script_args=("$@")
attempt="${ACP_CONFORMANCE_ATTEMPT:-1}"
sdk_key_defect() { grep -rqsF '私钥解密失败' "$work"; }
# `fail WHY FILE…`: says why, shows each file of the work dir named, exits 1.
fail() {
  local why="$1"
  shift
  if [ "$attempt" -lt 3 ] && sdk_key_defect; then
    say "WITNESS DEFECT (attempt $attempt of 3): $why — an SDK process could not read back the key the SDK had just written (私钥解密失败, its jsrsasign defect; not ours). Running the whole check again with fresh identities."
    cleanup
    trap - EXIT
    ACP_CONFORMANCE_ATTEMPT=$((attempt + 1)) exec bash "$script" "${script_args[@]}"
  fi
  say "FAIL: $why"
  for f in "$@"; do echo "--- $f" >&2; cat "$work/$f" >&2 2>/dev/null || true; done
  exit 1
}

# One build at a time: other conformance tests build the same cache folder (flock where there is one).
lock="$(dirname "$(mktemp -u)")/acp-ts-build.lock"
if command -v flock >/dev/null 2>&1; then dist="$(flock "$lock" bash "$kit/build.sh" | tail -1)"; else dist="$(bash "$kit/build.sh" | tail -1)"; fi
say "official SDK built at $dist"
say "work dir $work (removed at exit, with every process started here)"
