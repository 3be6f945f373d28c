#!/usr/bin/env bash
# Many more SIGKILL trials than CI runs: scripts/crash-trials.sh [TRIALS] [MODES]
#   scripts/crash-trials.sh 300 overwrite-partition,upsert,append-dedupe
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/build-node.mjs
CRASH_TRIALS="${1:-200}" CRASH_MODES="${2:-overwrite-partition,upsert,append-dedupe}" \
  npx vitest run --project integration test/integration/crash.test.ts
