#!/usr/bin/env bash
# The fast checks, run first by scripts/test.sh (and `npm run check`), so a formatting, lint or
# type error fails in seconds instead of after the slow lanes: Rust format, clippy (native, and the
# wasm32 crates the npm package and the Worker build) with -D warnings, rustdoc's broken links,
# then Biome (format and lint of the JavaScript) and tsc --checkJs (tsconfig.check.json).
# Needs the toolchain of rust-toolchain.toml and the npm packages (bash scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

step() {
  local start=$SECONDS
  echo "== check: $*"
  "$@"
  echo "== check: ok in $((SECONDS - start)) s: $*"
}

step cargo fmt --all --check
step cargo clippy --workspace --all-targets --locked -- -D warnings
# The wasm-only crates: the runtime (the npm package's wasm), the tooling wasm and the Worker API.
# worker/ and examples/rust-worker embed a generated registry, so they are checked by their lanes.
step cargo clippy -p vite-hub-sandbox -p vite-hub-sandbox-tooling -p vite-hub-sandbox-worker \
  --target wasm32-unknown-unknown --all-targets --locked -- -D warnings
export RUSTDOCFLAGS="-D rustdoc::broken_intra_doc_links"
step cargo doc -p vite-hub-sandbox-core -p vite-hub-box-seccomp --no-deps --locked --quiet
step cargo doc -p vite-hub-sandbox -p vite-hub-sandbox-tooling -p vite-hub-sandbox-worker \
  --target wasm32-unknown-unknown --no-deps --locked --quiet
unset RUSTDOCFLAGS
step node_modules/.bin/biome ci .
step node_modules/.bin/tsc -p tsconfig.check.json
echo "== check: every check passed"
