#!/usr/bin/env bash
# Builds a profile-guided (PGO) fabriclab into target/pgo/release/fabriclab.
#
# 1. an instrumented build (target/pgo-gen), 2. training runs: a short run of
# every protocol on the quickstart fabric plus the bench suite at a tenth of
# its size, 3. the optimised build from the merged profile. The simulator's
# results do not change (PGO only reorders and inlines code); the speed-up
# measured on this project's bench suite is in docs/performance.md.
#
# Usage: scripts/build-pgo.sh [--train-scale S]   (default 0.1; CI uses 0.02)
# Needs rustup's llvm-tools component (installed here when missing) for an
# llvm-profdata that reads the profiles of this rustc's LLVM.
set -euo pipefail
cd "$(dirname "$0")/.."

scale=0.1
while [ $# -gt 0 ]; do
  case "$1" in
    --train-scale) scale="${2:?--train-scale needs a value}"; shift 2 ;;
    *) echo "error: unknown argument '$1' (allowed: --train-scale S)" >&2; exit 2 ;;
  esac
done

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  rustup component add llvm-tools
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== 1/3 instrumented build"
RUSTFLAGS="-Cprofile-generate=$work/raw" \
  cargo build --release -p fabriclab-cli --target-dir target/pgo-gen
gen=target/pgo-gen/release/fabriclab

echo "== 2/3 training (every protocol, then the bench suite at scale $scale)"
protocols=$("$gen" protocols --names)
[ -n "$protocols" ] || { echo "error: 'fabriclab protocols --names' listed no protocol" >&2; exit 1; }
for p in $protocols; do
  "$gen" run experiments/quickstart.toml --set protocol.name="$p" \
    --set run.duration_ms=1.5 --set run.warmup_ms=0.2 -q --out "$work/out/$p" >/dev/null
done
"$gen" bench --scale "$scale" >/dev/null
"$profdata" merge -o "$work/merged.profdata" "$work"/raw/*.profraw

echo "== 3/3 optimised build"
FABRICLAB_BUILD=pgo RUSTFLAGS="-Cprofile-use=$work/merged.profdata" \
  cargo build --release -p fabriclab-cli --target-dir target/pgo
echo "built target/pgo/release/fabriclab"
