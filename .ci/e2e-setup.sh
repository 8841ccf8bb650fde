#!/usr/bin/env bash
# Installs the pinned official AG-UI clients (@ag-ui/client 0.0.58 and 1.0.0)
# that the end-to-end suite (crate iac-agui-tests) checks every stream with.
# Needs Node >= 18 and npm. Called by .ci/run before `cargo test --workspace`.
set -euo pipefail
cd "$(dirname "$0")/../tests/agui-clients"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "e2e-setup: node and npm are required (Node >= 18)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "e2e-setup: Node >= 18 required, found $(node --version)" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
# Smoke check: both clients load and accept a minimal run.
printf 'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\ndata: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n' \
  | node check.mjs >/dev/null
echo "e2e-setup: AG-UI clients installed in tests/agui-clients"
