#!/usr/bin/env bash
# Every test: set up, the fast checks (scripts/check.sh), build, Rust unit tests, wasm-bindgen tests in Node and headless Chromium,
# the user-machine lane, then the node:test lanes against the built package: the fast lanes by
# area, the slow lane (tarball installs, Vite and Nitro end to end), and the bench once in its
# quick mode as a smoke check. Each step says which lane it is in and how long it took; a failed
# node:test lane does not stop the next one, and the script fails at the end naming them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The fast checks first (format, lints, type check): a trivial mistake fails here in seconds.
bash scripts/check.sh
node scripts/build.mjs

echo "== cargo test (native unit tests)"
cargo test --workspace --lib

echo "== wasm-bindgen tests in Node"
wasm-pack test --node -- --test node

echo "== wasm-bindgen tests in headless Chromium"
# Chromium leaves profile and scoped dirs in TMPDIR: give it a private one and remove it after.
chrome_tmp=$(mktemp -d)
TMPDIR="$chrome_tmp" CHROMEDRIVER=/usr/bin/chromedriver wasm-pack test --headless --chrome -- --test browser
rm -rf "$chrome_tmp"

echo "== the user-machine lane: an unprivileged user, Node from a private folder, tools hidden"
bash scripts/test-user-lane.sh

# The local Box hosts these tests start keep prepared projects under $XDG_CACHE_HOME: a private
# one per suite, so no run finds the preparations of an earlier one (or of the user's own apps).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache"
failed=()

# One node:test run of one lane's folder, with its name and wall time.
run_lane() {
  local kind=$1 dir=$2 start=$SECONDS
  echo "== $kind lane: $dir"
  if node --test --test-concurrency=2 "$dir"; then
    echo "== $kind lane: $dir passed in $((SECONDS - start)) s"
  else
    echo "== $kind lane: $dir FAILED after $((SECONDS - start)) s"
    failed+=("$dir")
  fi
}

# The lanes' folders come from tests/support/lanes.mjs, their one list (an assignment, so a
# failure to list them stops the script instead of running no lane).
fast_lanes=$(node tests/support/lanes.mjs fast)
slow_lanes=$(node tests/support/lanes.mjs slow)
for dir in $fast_lanes; do run_lane fast "$dir"; done
for dir in $slow_lanes; do run_lane slow "$dir"; done

echo "== bench smoke: node scripts/bench.mjs --quick, once (figures printed, never asserted)"
start=$SECONDS
if timeout 1800 node scripts/bench.mjs --quick --out "$scratch/bench.json" && node scripts/bench-check.mjs "$scratch/bench.json"; then
  echo "== bench smoke passed in $((SECONDS - start)) s"
else
  echo "== bench smoke FAILED after $((SECONDS - start)) s"
  failed+=("bench smoke")
fi

if ((${#failed[@]})); then
  echo "== failed: ${failed[*]}"
  exit 1
fi
echo "== every lane passed"
