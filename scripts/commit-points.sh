#!/usr/bin/env bash
# Commits a reproduction's point records while it runs, so that losing the machine loses at most
# one interval of points: a fresh clone's `fabriclab repro PAPER` resumes from the records.
#
#   scripts/commit-points.sh PAPER [MINUTES] [PID]
#
# Every MINUTES (default 30) it commits experiments/repro/PAPER/points/ alone (nothing else that is
# staged or changed goes in); with PID (the repro's process), it stops when that process has ended,
# after a last commit. Run it from the repository, beside the run:
#
#   fabriclab repro sird --jobs 2 & scripts/commit-points.sh sird 30 $! &
set -euo pipefail
paper=${1:?usage: scripts/commit-points.sh PAPER [MINUTES] [PID]}
minutes=${2:-30}
pid=${3:-}
cd "$(git rev-parse --show-toplevel)"
dir="experiments/repro/$paper/points"

# A commit that fails (another git command holds the index) is tried again next time.
commit() {
  [ -d "$dir" ] || return 0
  git add -- "$dir" || return 0
  if ! git diff --cached --quiet -- "$dir"; then
    local n
    n=$(find "$dir" -name '*.json' | wc -l)
    if git commit --quiet --only -m "repro $paper: $n point records so far" -- "$dir"; then
      echo "committed $dir ($n records)"
    fi
  fi
}

while true; do
  for _ in $(seq "$((minutes * 6))"); do
    sleep 10
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      commit
      exit 0
    fi
  done
  commit
done
