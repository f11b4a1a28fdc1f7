#!/usr/bin/env bash
# Installs everything the build and the tests need on a fresh Debian machine (idempotent: each
# step checks what is already there first). Run as root, or with sudo available for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_PACK_VERSION=0.15.1
# slirp4netns gives an allow-all Box a network of its own (no host loopback), box-network.mjs.
APT_PACKAGES=(bubblewrap slirp4netns chromium chromium-driver)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The build compiles Rust: the user who runs this needs rustup (and its cargo) on PATH.
for tool in rustup cargo; do
  command -v "$tool" >/dev/null || { echo "setup: $tool is not on PATH for user $(id -un): install Rust with rustup (https://rustup.rs) as this user, or run this as the user who did" >&2; exit 1; }
done

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "setup: rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(wasm-pack --version 2>/dev/null)" != "wasm-pack $WASM_PACK_VERSION" ]; then
  echo "setup: cargo install wasm-pack $WASM_PACK_VERSION"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked
fi

# The wasm-bindgen CLI must match the pinned wasm-bindgen crate; install it once into cargo's bin
# so wasm-pack finds it instead of downloading a binary.
WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)"$/\1/p' Cargo.toml)
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  echo "setup: cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# worker-build builds the repository's Rust Worker (worker/, wrangler.toml's build step); its version
# is the workers-rs `worker` crate's that the workspace resolves (worker-build refuses another minor).
WORKER_BUILD_VERSION=$(sed -n '/^name = "worker"$/{n;s/^version = "\(.*\)"$/\1/p;}' Cargo.lock)
if [ "$(worker-build --version 2>/dev/null)" != "$WORKER_BUILD_VERSION" ]; then
  echo "setup: cargo install worker-build $WORKER_BUILD_VERSION"
  cargo install worker-build --version "$WORKER_BUILD_VERSION" --locked
fi

if [ ! -d node_modules/@vercel/sandbox ] || [ ! -d node_modules/nitro ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi

# pnpm installs pnpm-workspace Definitions inside the local Box (which runs host binaries under
# bubblewrap: `npm install -g` puts it in $(npm prefix -g)/bin, i.e. /usr/bin → /usr/lib/node_modules,
# both inside the read-only /usr bind). Pinned so Box installs are reproducible.
PNPM_VERSION=10.34.8
if [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "setup: npm install -g pnpm@$PNPM_VERSION"
  SUDO=""; [ "$(id -u)" = 0 ] || [ -w "$(npm prefix -g)/lib" ] || SUDO=sudo
  $SUDO npm install -g --no-audit --no-fund "pnpm@$PNPM_VERSION"
fi

# Yarn 1 installs yarn.lock Definitions in the local Box (and runs a Berry project's own release,
# `yarnPath` in its .yarnrc.yml); pinned like pnpm. The Berry release the tests ship comes from npm
# (@yarnpkg/cli-dist, fetched by tests/runtime/yarn-installs.test.mjs).
YARN_VERSION=1.22.22
if [ "$(yarn --version 2>/dev/null)" != "$YARN_VERSION" ]; then
  echo "setup: npm install -g yarn@$YARN_VERSION"
  SUDO=""; [ "$(id -u)" = 0 ] || [ -w "$(npm prefix -g)/lib" ] || SUDO=sudo
  $SUDO npm install -g --no-audit --no-fund "yarn@$YARN_VERSION"
fi
