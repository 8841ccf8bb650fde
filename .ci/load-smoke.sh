#!/usr/bin/env bash
# Performance smoke test (issue 8), called by .ci/run. No timings are
# asserted here: it checks that the criterion benches build, that the load
# tool's own tests pass, and that the load tool can drive a spawned iac-agui
# (scripted runtime in-process) through a few runs and idle streams with no
# error (the tool exits non-zero on any failed run).
#
# The real figures come from the command in BENCHMARKS.md (release build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target="${CARGO_TARGET_DIR:-target}"
# debug by default (CI builds it anyway); LOAD_SMOKE_PROFILE=release reuses a
# release build.
profile="${LOAD_SMOKE_PROFILE:-debug}"
build_flags=()
[[ $profile == release ]] && build_flags=(--release)
step() { printf '\n== load-smoke: %s\n' "$*"; }

step "benches build"
cargo bench -p iac-agui-core --no-run

step "load tool tests"
cargo test -p iac-agui-load "${build_flags[@]}"

step "load tool against a spawned iac-agui"
cargo build -p iac-agui -p iac-agui-load "${build_flags[@]}"
load="$target/$profile/iac-agui-load"
"$load" --spawn --server-bin "$target/$profile/iac-agui" \
  --runs 20 --concurrency 4 --scenario deltas:200
"$load" --spawn --server-bin "$target/$profile/iac-agui" \
  --runs 6 --concurrency 2 --scenario tool
# Four conversations of five turns each (a THREAD_BUSY or any other
# refusal of a later turn fails the run), each client's turns on one
# connection: every turn after a client's first must have gone on it.
conversations=$("$load" --spawn --server-bin "$target/$profile/iac-agui" \
  --runs 20 --concurrency 4 --scenario plain --turns --keep-alive)
echo "$conversations"
grep -Eq '^\| runs on a kept connection +\| 16 *$' <<<"$conversations" || {
  echo "load-smoke: expected 16 turns on kept connections" >&2
  exit 1
}
# Ticks on the kernel's timer: every tick of every run comes back stamped.
ticks=$("$load" --spawn --server-bin "$target/$profile/iac-agui" \
  --runs 4 --concurrency 2 --scenario ticks:20:5:exact)
echo "$ticks"
grep -Eq '^\| tick latency .*\(n=80\) *$' <<<"$ticks" || {
  echo "load-smoke: expected the latency of 80 ticks" >&2
  exit 1
}
"$load" idle --spawn --server-bin "$target/$profile/iac-agui" \
  --streams 20 --concurrency 10 --hold 1.5 --heartbeat 0.5

step "load tool straight to the scripted runtime (A2A baseline)"
"$load" --spawn --a2a --runs 10 --concurrency 2 --scenario deltas:200
