#!/usr/bin/env bash
# Instructions the server executes per relayed event: iac-agui under
# valgrind's callgrind, against a standalone scripted runtime, for two runs
# of 20,000 text deltas. Unlike CPU time, the count does not move with the
# machine's speed, so two commits can be compared minutes or days apart.
#
#   bash tests/load/instructions-per-event.sh [path/to/iac-agui]
#
# Needs valgrind (apt-get install valgrind). The callgrind profile is left
# in $TMPDIR for callgrind_annotate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p iac-agui -p iac-agui-load -p iac-agui-scripted-runtime
server="${1:-$target/release/iac-agui}"
work=$(mktemp -d)
profile="${TMPDIR:-/tmp}/callgrind.iac-agui.$$"
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
  for _ in $(seq 1 100); do
    curl -fs -o /dev/null "$1" && return 0
    sleep 0.2
  done
  echo "not up: $1" >&2
  return 1
}

runtime_port=$(free_port)
"$target/release/iac-agui-scripted-runtime" --port "$runtime_port" >/dev/null 2>&1 &
pids+=($!)
server_port=$(free_port)
mkdir -p "$work/ws" "$work/state"
IAC_CODE_AGUI_ALLOWED_CWDS="$work/ws" valgrind --tool=callgrind \
  --callgrind-out-file="$profile" "$server" serve --port "$server_port" \
  --a2a-url "http://127.0.0.1:$runtime_port/" --state-dir "$work/state" >/dev/null 2>&1 &
pids+=($!)
wait_up "http://127.0.0.1:$server_port/health"

report=$("$target/release/iac-agui-load" --url "http://127.0.0.1:$server_port/" \
  --cwd "$work/ws" --runs 2 --scenario deltas:20000)
events=$(grep -E '^\| events  ' <<<"$report" | tr -dc '0-9')
# callgrind writes its profile when the server exits (SIGTERM: graceful).
kill -TERM "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
total=$(callgrind_annotate "$profile" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "events relayed: $events"
echo "instructions:   $total"
echo "per event:      $((total / events))"
echo "profile:        $profile"
