#!/usr/bin/env bash
# SIRD over UDP on a one-machine testbed: network namespaces (one per host)
# joined by veth pairs through a Linux bridge (the switch). tc tbf shapes every
# host uplink and every switch port to LINK (1 Gbit by default), so a
# receiver's switch port is the shared bottleneck of an incast.
#
#   scripts/netns-testbed.sh [--quick] [incast|congested|soak|all]
#
#   incast     6-to-1 incast of 1 MB messages plus a probe host measuring
#              8-byte message RTT, SIRD credits paced vs unpaced (SIRD Fig. 9).
#   congested  one sender to 4 receivers that also receive from 4 other
#              senders, SThr = inf vs 0.5 BDP (SIRD Fig. 10).
#   soak       N messages of random sizes (WKb) under loss, reordering and
#              duplication (netem when the kernel has it, else the driver's own
#              fault injection), all delivered intact (checked by the receiver).
#
# Needs root, ip and tc. Uses only the addresses 10.231.0.0/24 inside its
# namespaces; everything is removed on exit. Results: one JSON line per run on
# stdout (and the raw outputs in $OUT, default a temporary directory).
# FABRICLAB=path/to/fabriclab selects the binary (default target/release/fabriclab).
set -euo pipefail

QUICK=0
if [[ "${1:-}" == "--quick" ]]; then QUICK=1; shift; fi
WHAT=${1:-all}
BIN=${FABRICLAB:-$(dirname "$0")/../target/release/fabriclab}
LINK=${LINK:-1gbit}
# Switch buffer per port (tbf queue limit), bytes.
BUF=${BUF:-400000}
# SIRD sees a 1 Gbps NIC; the base RTT covers veth, bridge and process wake-ups.
RTT_US=${RTT_US:-200}
DUR=${DUR:-$([[ $QUICK == 1 ]] && echo 1.5 || echo 10)}
SOAK_N=${SOAK_N:-$([[ $QUICK == 1 ]] && echo 300 || echo 5000)}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
P="fl$$"            # name prefix: namespaces, links (<= 15 characters)
BR="${P}br"
PORT=7000
COMMON=(--set link_rate_gbps=1 --set "base_rtt_us=$RTT_US")

die() { echo "netns-testbed: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (network namespaces and tc)"
command -v ip >/dev/null && command -v tc >/dev/null || die "needs ip and tc (iproute2)"
[[ -x "$BIN" ]] || die "no fabriclab binary at $BIN (cargo build --release, or set FABRICLAB)"

HOSTS=0
cleanup() {
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for i in $(seq 1 "$HOSTS"); do ip netns del "${P}h$i" 2>/dev/null || true; done
  ip link del "$BR" 2>/dev/null || true
}
trap cleanup EXIT

shape() { # shape NS-or-"" DEV: tbf at LINK with a BUF-byte queue
  local ns=$1 dev=$2
  local cmd=(tc qdisc replace dev "$dev" root tbf rate "$LINK" burst 16kb limit "$BUF")
  if [[ -n $ns ]]; then ip netns exec "$ns" "${cmd[@]}"; else "${cmd[@]}"; fi
}

# setup N: hosts h1..hN at 10.231.0.i
setup() {
  cleanup
  HOSTS=$1
  ip link add "$BR" type bridge
  ip link set "$BR" up
  for i in $(seq 1 "$HOSTS"); do
    local ns="${P}h$i" h="${P}v$i" s="${P}s$i"
    ip netns add "$ns"
    ip link add "$h" type veth peer name "$s"
    ip link set "$h" netns "$ns"
    ip link set "$s" master "$BR" up
    ip netns exec "$ns" ip addr add "10.231.0.$i/24" dev "$h"
    ip netns exec "$ns" ip link set "$h" up
    ip netns exec "$ns" ip link set lo up
    shape "$ns" "$h"   # host uplink
    shape "" "$s"      # switch port towards host i
  done
}

addr() { echo "10.231.0.$1:$PORT"; }
on() { local i=$1; shift; ip netns exec "${P}h$i" "$@"; }
serve() { # serve HOST SECONDS EXTRA... (background; output in $OUT/serve-HOST.json)
  local i=$1 d=$2; shift 2
  on "$i" "$BIN" udp serve --bind "$(addr "$i")" --duration "$d" --report-every 1000 "${COMMON[@]}" "$@" \
    >"$OUT/serve-$i.json" 2>/dev/null &
}
bench() { # bench HOST NAME ARGS... (background; output in $OUT/NAME.json)
  local i=$1 name=$2; shift 2
  on "$i" "$BIN" udp bench --bind "10.231.0.$i:0" --json "${COMMON[@]}" "$@" >"$OUT/$name.json" &
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

incast() {
  setup 8
  for paced in true false; do
    local set=(--set "sird.credit_pacing=$paced")
    serve 1 "$(add "$DUR" 2)" "${set[@]}"
    sleep 0.3
    for s in 2 3 4 5 6 7; do
      bench "$s" "incast-$paced-s$s" --to "$(addr 1)" --dist fixed:1000000 --window 1 --duration "$DUR" "${set[@]}"
    done
    sleep 0.2
    on 8 "$BIN" udp probe --bind "10.231.0.8:0" --to "$(addr 1)" --size 8 --interval-us 2000 \
      --duration "$(add "$DUR" -0.4)" --json "${COMMON[@]}" "${set[@]}" >"$OUT/incast-$paced-probe.json"
    wait
    local gp=0
    for s in 2 3 4 5 6 7; do gp=$(add "$gp" "$(field "$OUT/incast-$paced-s$s.json" "r['goodput_gbps']")"); done
    local pr="$OUT/incast-$paced-probe.json"
    printf '{"experiment": "incast", "credit_pacing": %s, "incast_goodput_gbps": %.3f, "probe_count": %s, "probe_p50_us": %s, "probe_p99_us": %s, "probe_failed": %s}\n' \
      "$paced" "$gp" "$(field "$pr" "r['latency_us']['count']")" "$(field "$pr" "r['latency_us']['p50']")" \
      "$(field "$pr" "r['latency_us']['p99']")" "$(field "$pr" "r['messages_failed']")"
  done
}

congested() {
  setup 9
  for sthr in inf 0.5; do
    local set=(--set "sird.sthr_bdp=$sthr")
    for r in 2 3 4 5; do serve "$r" "$(add "$DUR" 2)" "${set[@]}"; done
    sleep 0.3
    bench 1 "cong-$sthr-s1" --to "$(addr 2)" --to "$(addr 3)" --to "$(addr 4)" --to "$(addr 5)" \
      --dist fixed:1000000 --window 8 --duration "$DUR" --warmup 0.2 "${set[@]}"
    for s in 6 7 8 9; do
      bench "$s" "cong-$sthr-s$s" --to "$(addr $((s - 4)))" --dist fixed:1000000 --window 2 --duration "$DUR" \
        --warmup 0.2 "${set[@]}"
    done
    wait
    local own=0 total=0
    own=$(field "$OUT/cong-$sthr-s1.json" "r['goodput_gbps']")
    total=$own
    for s in 6 7 8 9; do total=$(add "$total" "$(field "$OUT/cong-$sthr-s$s.json" "r['goodput_gbps']")"); done
    printf '{"experiment": "congested_sender", "sthr_bdp": "%s", "congested_sender_gbps": %.3f, "total_gbps": %.3f}\n' \
      "$sthr" "$own" "$total"
  done
}

soak() {
  setup 2
  local how set=()
  if tc qdisc replace dev "${P}s2" root netem loss 1% duplicate 1% delay 200us 100us reorder 5% 2>/dev/null; then
    how="netem: 1% loss, 1% duplicates, 5% reordered, 200+-100 us delay"
  else
    how="driver fault injection (no netem in this kernel): 1% loss, 1% duplicates, 5% reordered"
    set=(--set faults.loss=0.01 --set faults.duplicate=0.01 --set faults.reorder=0.05)
  fi
  serve 2 "$(add "$DUR" 30)" --verify --messages "$SOAK_N" "${set[@]}"
  local serve_pid=$!
  sleep 0.3
  # SOAK_N random-size messages, 8 in flight; the receiver checks every byte.
  on 1 "$BIN" udp bench --bind "10.231.0.1:0" --to "$(addr 2)" --dist wkb --window 8 --count "$SOAK_N" \
    --duration "$(add "$DUR" 20)" --json "${COMMON[@]}" "${set[@]}" >"$OUT/soak-bench.json"
  wait "$serve_pid" || true
  local sv="$OUT/serve-2.json"
  printf '{"experiment": "soak", "faults": "%s", "sent": %s, "confirmed": %s, "failed": %s, "delivered": %s, "verified": %s, "corrupt": %s, "retries": %s}\n' \
    "$how" "$(field "$OUT/soak-bench.json" "r['stats']['messages_sent']")" \
    "$(field "$OUT/soak-bench.json" "r['stats']['messages_confirmed']")" \
    "$(field "$OUT/soak-bench.json" "r['stats']['messages_failed']")" \
    "$(tail -1 "$sv" | python3 -c "import json,sys; print(json.load(sys.stdin)['stats']['messages_delivered'])")" \
    "$(tail -1 "$sv" | python3 -c "import json,sys; print(json.load(sys.stdin)['verified'])")" \
    "$(tail -1 "$sv" | python3 -c "import json,sys; print(json.load(sys.stdin)['corrupt'])")" \
    "$(field "$OUT/soak-bench.json" "r['stats']['retries']")"
}

echo "# outputs in $OUT" >&2
case $WHAT in
  incast) incast ;;
  congested) congested ;;
  soak) soak ;;
  all) incast; congested; soak ;;
  *) die "unknown experiment $WHAT (incast, congested, soak or all)" ;;
esac
