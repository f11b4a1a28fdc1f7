#!/usr/bin/env bash
# Every test: set up, build, Rust unit tests, wasm-bindgen tests in Node and headless Chromium,
# then the node:test integration and conformance suites against the built package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
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

echo "== node:test integration and conformance"
# The local Box hosts these tests start keep prepared projects under $XDG_CACHE_HOME: a private
# one per suite, so no run finds the preparations of an earlier one (or of the user's own apps).
cache_home=$(mktemp -d)
trap 'rm -rf "$cache_home"' EXIT
XDG_CACHE_HOME="$cache_home" node --test --test-concurrency=2 tests/node/ tests/conformance/
