#!/usr/bin/env bash
# Builds the iac-agui WebAssembly component (host-wasm/component, WIT world
# iac-agui:core, wasm32-wasip2) and checks it under wasmtime: every golden
# case must replay byte for byte as natively, the verdicts must match the
# native ones, and the component may import only what Rust's wasip2 std
# links.
#
#   bash .ci/component.sh
#
# Output: $CARGO_TARGET_DIR/wasm32-wasip2/component/iac_agui_component.wasm
# (CARGO_TARGET_DIR defaults to ./target). Any failure exits non-zero.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n== component: %s\n' "$*"; }
fail() { printf 'component: %s\n' "$*" >&2; exit 1; }

step "toolchain"
if ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
command -v gzip >/dev/null || fail "gzip is needed to report the gzipped size"

# A size-optimised profile defined here rather than in Cargo.toml, so that
# the workspace's release profile (used by the native server) stays as it is.
export CARGO_PROFILE_COMPONENT_INHERITS=release
export CARGO_PROFILE_COMPONENT_OPT_LEVEL=s
export CARGO_PROFILE_COMPONENT_LTO=true
export CARGO_PROFILE_COMPONENT_CODEGEN_UNITS=1
export CARGO_PROFILE_COMPONENT_PANIC=abort
export CARGO_PROFILE_COMPONENT_DEBUG=false
export CARGO_PROFILE_COMPONENT_STRIP=true

step "cargo build -p iac-agui-component (wasm32-wasip2, size-optimised)"
cargo build -p iac-agui-component --target wasm32-wasip2 --profile component
wasm="$CARGO_TARGET_DIR/wasm32-wasip2/component/iac_agui_component.wasm"
[[ -s "$wasm" ]] || fail "the build left no component at $wasm"
# wasm-component-ld links a component for wasip2; a core module would start
# with version 1 (01 00 00 00) instead of the component layer (0d 00 01 00).
header=$(od -An -tx1 -N8 "$wasm" | tr -d ' \n')
[[ "$header" == 0061736d0d000100 ]] || fail "$wasm is not a component (header $header)"

size=$(wc -c <"$wasm")
gzipped=$(gzip -9 -c "$wasm" | wc -c)
printf 'component size: %d bytes (%d KiB), gzipped: %d bytes (%d KiB)\n' \
  "$size" $((size / 1024)) "$gzipped" $((gzipped / 1024))

step "wasmtime: golden parity, verdict parity, imports"
export IAC_AGUI_COMPONENT="$wasm"
cargo test -p iac-agui-component-host

step "wasmtime: the judge example on its sample files"
data=host-wasm/component-host/examples/data
cargo run -q -p iac-agui-component-host --example judge -- \
  "$data/request.json" "$data/resume.json" "$data/interrupts.json"

step "ok"
