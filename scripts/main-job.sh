#!/usr/bin/env bash
# The main job: set up, build the npm package, and run the release-notes Definition through
# runSandbox on the local provider, printing the Response like `curl -i`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
node scripts/build.mjs >&2
node dist/cli.mjs run examples/app/server/sandboxes/release-notes \
  --payload '{"notes":"# v1.2\n- ship it\n- fix the login bug"}'
