#!/usr/bin/env bash
# Creates (or reuses) the Python venv that holds the real iac-code A2A runtime
# for the interop tests. Idempotent: a venv whose stamp matches the pinned
# requirements is reused without touching the network.
#
# Env:
#   IAC_INTEROP_VENV   venv directory (default: <repo>/target/interop-venv)
#   IAC_INTEROP_PYTHON interpreter used to create it (default: python3)
#
# Prints the venv path on the last line of stdout. Exits non-zero (loudly) on
# any failure, so CI fails instead of skipping the interop tests.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${IAC_INTEROP_VENV:-$repo/target/interop-venv}"
python="${IAC_INTEROP_PYTHON:-python3}"

# a2a-sdk 1.2.1+ removed encode_page_token, which iac-code 0.16.0 imports.
requirements=(
  "iac-code[agui]==0.16.0"
  "a2a-sdk[http-server,signing]==1.2.0"
)
stamp_text="$(printf '%s\n' "${requirements[@]}")"
stamp="$venv/.iac-interop-stamp"

log() { printf 'interop-setup: %s\n' "$*" >&2; }
fail() { log "ERROR: $*"; exit 1; }

start=$(date +%s)

smoke_check() {
  # Explicit returns: callers use `smoke_check || ...`, where set -e is off.
  "$venv/bin/python" - <<'PY' || return 1
import importlib.metadata as md
import iac_code.a2a.app  # noqa: F401  (fails at import with a wrong a2a-sdk)
import iac_code.agui  # noqa: F401
assert md.version("iac-code") == "0.16.0", md.version("iac-code")
assert md.version("a2a-sdk") == "1.2.0", md.version("a2a-sdk")
PY
  [ -x "$venv/bin/iac-code" ] || { log "iac-code entry point missing in $venv/bin"; return 1; }
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] && [ -x "$venv/bin/python" ]; then
  if smoke_check; then
    log "venv up to date at $venv ($(( $(date +%s) - start ))s)"
    printf '%s\n' "$venv"
    exit 0
  fi
  log "existing venv failed its check; recreating it"
  rm -rf "$venv"
fi

command -v "$python" >/dev/null || fail "no Python interpreter '$python'"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || fail "$python is older than 3.10 (iac-code 0.16.0 needs >= 3.10)"

rm -f "$stamp"
if [ ! -x "$venv/bin/python" ]; then
  log "creating venv at $venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv" || fail "python -m venv failed"
fi

log "installing ${requirements[*]}"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "${requirements[@]}" || fail "pip install failed"

smoke_check || fail "installed runtime does not import"
printf '%s\n' "$stamp_text" >"$stamp"
log "venv ready at $venv ($(( $(date +%s) - start ))s)"
printf '%s\n' "$venv"
