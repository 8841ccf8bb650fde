#!/usr/bin/env bash
# Regenerates every figure of BENCHMARKS.md: criterion micro-benchmarks of
# the core, then the load tool against a spawned iac-agui (release build,
# scripted A2A runtime in the load process) and against the runtime alone
# (the A2A baseline for "added" latency).
#
#   bash tests/load/run-benchmarks.sh            everything (~8 min + build)
#   SKIP_CRITERION=1 bash tests/load/run-benchmarks.sh   load figures, and the
#                                                        floor before and after
#
# To add the Python reference, start it against a scripted runtime first
# (see BENCHMARKS.md) and export PY_AGUI_URL=http://127.0.0.1:<port>/ and
# PY_AGUI_PID=<pid of iac-code agui>.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

target="${CARGO_TARGET_DIR:-target}"
load="$target/release/iac-agui-load"
server="$target/release/iac-agui"
section() { printf '\n### %s\n\n' "$*"; }

cargo build --release -p iac-agui -p iac-agui-load -p iac-agui-scripted-runtime

# The machine's speed moves between minutes (BENCHMARKS.md): the floor is
# measured before and after the load figures, whatever else is skipped.
floor() {
  section "machine speed $1: criterion floor (parse one A2A frame, serialise one AG-UI event)"
  cargo bench -p iac-agui-core --bench mapping -- floor 2>&1 | grep -E '^[a-z_]+/|time:|thrpt:'
}

if [[ -z ${SKIP_CRITERION:-} ]]; then
  section "criterion (cargo bench -p iac-agui-core)"
  cargo bench -p iac-agui-core 2>&1 | grep -E '^[a-z_]+/|time:|thrpt:'
else
  floor before
fi

# Every spawned server's thread files stay until the script ends, as a
# server's do: deleting them made the next step's new files cost up to 25
# times the CPU (BENCHMARKS.md, "Where the burst and the tick hop go").
TMPDIR="$(mktemp -d)"
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
ours=(--spawn --server-bin "$server" --keep-state)
a2a=(--spawn --a2a)

section "one run, 100k deltas (x5): throughput, CPU per event"
"$load" "${ours[@]}" --runs 5 --scenario deltas:100000
"$load" "${a2a[@]}" --runs 5 --scenario deltas:100000

section "100 concurrent runs of 100 deltas (1000 runs): latency"
"$load" "${ours[@]}" --runs 1000 --concurrency 100 --scenario deltas:100
"$load" "${a2a[@]}" --runs 1000 --concurrency 100 --scenario deltas:100

section "per-event latency: 100 concurrent runs of 500 ticks, one every 10 ms"
"$load" "${ours[@]}" --runs 100 --concurrency 100 --scenario ticks:500:10
"$load" "${a2a[@]}" --runs 100 --concurrency 100 --scenario ticks:500:10

section "per-event latency in steady state: 100 runs of 2,000 ticks (20 s), each run's first second left out; default event loops, then one"
steady=(--runs 100 --concurrency 100 --scenario ticks:2000:10 --skip-ticks 100)
"$load" "${ours[@]}" "${steady[@]}"
IAC_AGUI_WORKERS=1 "$load" "${ours[@]}" "${steady[@]}"
"$load" "${a2a[@]}" "${steady[@]}"

# The runtime ticks on tokio's timer, which counts whole milliseconds: the
# ticks of all runs due in one millisecond go out together, ten at a time
# here. With `:exact` each run ticks on a kernel timer at its own moments,
# as independent streams do.
section "the same steady state, each tick at its own time (ticks:2000:10:exact)"
exact=(--runs 100 --concurrency 100 --scenario ticks:2000:10:exact --skip-ticks 100)
"$load" "${ours[@]}" "${exact[@]}"
"$load" "${a2a[@]}" "${exact[@]}"

section "admission: plain runs, one client"
"$load" "${ours[@]}" --runs 200 --scenario plain
"$load" "${a2a[@]}" --runs 200 --scenario plain

section "admission: plain runs, 100 clients"
"$load" "${ours[@]}" --runs 1000 --concurrency 100 --threads 2 --scenario plain

section "admission: plain runs, 100 clients, each holding one thread (a conversation: every run after its first is a turn on an existing thread)"
"$load" "${ours[@]}" --runs 2000 --concurrency 100 --threads 2 --scenario plain --turns

section "admission: the same conversations, each client's turns on one connection (HTTP keep-alive, as a browser's fetch)"
"$load" "${ours[@]}" --runs 2000 --concurrency 100 --threads 2 --scenario plain --turns --keep-alive

section "admission: plain runs, 100 clients, 64 MiB of another program's data unwritten (the store flushes file by file, not with syncfs)"
dd if=/dev/zero of="$TMPDIR/unwritten" bs=1M count=64 status=none
"$load" "${ours[@]}" --runs 1000 --concurrency 100 --threads 2 --scenario plain
rm -f "$TMPDIR/unwritten" # its data is dropped, not written: the next steps start clean

section "admission among 100 streaming runs: 1,000 runs of 50 ticks (0.5 s), 100 at once, each run's first 5 ticks left out"
churn=(--runs 1000 --concurrency 100 --threads 2 --scenario ticks:50:10 --skip-ticks 5)
"$load" "${ours[@]}" "${churn[@]}"
"$load" "${a2a[@]}" "${churn[@]}"

section "admission at a set load: runs started at 1,000 and 2,000 per second, at most 100 at once"
for rate in 1000 2000; do
  "$load" "${ours[@]}" --runs 4000 --concurrency 100 --threads 2 --rate "$rate" --scenario plain
done
"$load" "${a2a[@]}" --runs 4000 --concurrency 100 --threads 2 --rate 2000 --scenario plain

section "admission: the opening burst alone (100 runs, 100 clients at once), three times"
burst=(--runs 100 --concurrency 100 --threads 2 --scenario plain)
for _ in 1 2 3; do "$load" "${ours[@]}" "${burst[@]}"; done
"$load" "${a2a[@]}" "${burst[@]}"

section "memory over one, then three 1,000,000-delta runs"
"$load" "${ours[@]}" --runs 1 --scenario deltas:1000000
"$load" "${ours[@]}" --runs 3 --scenario deltas:1000000

floor after

section "idle streams (heartbeat 1 s)"
# Near the open-file limit the server refuses what its descriptor budget
# has no room for (503): the table counts them, the script goes on.
"$load" idle "${ours[@]}" --streams "${IDLE_STREAMS:-5000}" --concurrency 200 --hold 5 --heartbeat 1 ||
  echo "(some streams were refused or ended early: see the table's rows)"

if [[ -n ${PY_AGUI_URL:-} ]]; then
  py=(--url "$PY_AGUI_URL" --pid "$PY_AGUI_PID")
  section "Python iac-code agui 0.16.0 at $PY_AGUI_URL"
  "$load" "${py[@]}" --runs 5 --scenario deltas:100000
  "$load" "${py[@]}" --runs 1000 --concurrency 100 --scenario deltas:100
  "$load" "${py[@]}" --runs 100 --concurrency 100 --scenario ticks:500:10
  "$load" "${py[@]}" --runs 200 --scenario plain
  "$load" idle "${py[@]}" --streams "${IDLE_STREAMS:-5000}" --concurrency 200 --hold 5
fi
