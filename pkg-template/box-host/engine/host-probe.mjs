// The one start-up probe of a local Box host: which isolation this machine gives a Box, which
// network, which limits and which tools, and what is missing with how to get it. Run once per
// process (a success is kept; a probe whose isolation failed runs again at the next host start,
// so a probe that timed out on a loaded machine never leaves the process without isolation for
// good). `executionAuthority`, the dev start-up line (`describeHost`) and the host's refusals
// all read this one object, so they cannot disagree.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { diskBound } from './box-disk.mjs';
import { chooseCgroups } from './box-limits.mjs';
import { SYSTEM_PATH, resolveToolchain } from './box-toolchain.mjs';
import { probeSyscallFilter } from './box-seccomp.mjs';
import { BOX_UID_RANGE } from './box-user.mjs';
import { classifySeatbeltProbe, probeSeatbeltArgs } from './seatbelt.mjs';

/** The uid and gid of Box commands under bubblewrap (not root; mapped to the Box's host uid, box-user.mjs). */
export const BOX_UID = 1000;

/**
 * `{ ok, code, signal, stderr }` of `file args` (within 10 s); `options` are execFile's (a `uid` to
 * run it as). `code` is the exit code, or spawn's error code (`ENOENT`); `signal` the one that
 * killed it, else null.
 */
function run(file, args, options = {}) {
  return new Promise((resolve) => {
    try {
      // The host's own tools come from the system PATH, never the app's (no PATH injection).
      execFile(file, args, { env: { PATH: SYSTEM_PATH }, timeout: 10_000, ...options }, (err, stdout, stderr) => {
        resolve({
          ok: !err,
          code: err ? (typeof err.code === 'number' ? err.code : (err.code ?? 'failed')) : 0,
          signal: err?.signal ?? null,
          stdout: String(stdout ?? ''),
          stderr: String(stderr ?? '').trim(),
        });
      });
    } catch (err) {
      // Thrown by spawn itself: e.g. EINVAL for a uid this user namespace does not map (root in
      // a rootless container asked to run as a Box uid).
      resolve({ ok: false, code: err.code ?? 'failed', signal: null, stdout: '', stderr: err.message });
    }
  });
}

/** The probes' bwrap options: every namespace a Box command gets, the host's `/` read-only. */
const PROBE_OPTIONS = [
  '--unshare-all',
  '--unshare-user',
  '--uid',
  String(BOX_UID),
  '--gid',
  String(BOX_UID),
  '--die-with-parent',
  '--ro-bind',
  '/',
  '/',
];
const PROBE_ARGS = [...PROBE_OPTIONS, 'true'];

/** The last line of a tool's stderr, for a one-line reason. */
function lastLine(text) {
  return text.split('\n').filter(Boolean).pop() ?? '';
}

/**
 * `{ works, boxUsers, problem }`: whether bwrap builds a sandbox here, one run that makes every
 * namespace a Box command gets; on a root host the unprivileged run (the one Box commands use,
 * box-user.mjs) is tried first. `problem` says why not, with the fix where one is known
 * (shared/reference/local-isolation.md §1.2: restricted user namespaces).
 */
async function probeBubblewrap() {
  if (process.geteuid?.() === 0) {
    const asBoxUser = await run('bwrap', PROBE_ARGS, { uid: BOX_UID_RANGE.first, gid: BOX_UID_RANGE.first, cwd: '/' });
    if (asBoxUser.ok) return { works: true, boxUsers: true, problem: null };
  }
  const plain = await run('bwrap', PROBE_ARGS);
  if (plain.ok) return { works: true, boxUsers: false, problem: null };
  if (plain.code === 'ENOENT')
    return {
      works: false,
      boxUsers: false,
      problem:
        'bubblewrap (bwrap) is not installed: apt-get install bubblewrap, dnf install bubblewrap, apk add bubblewrap or pacman -S bubblewrap',
    };
  return { works: false, boxUsers: false, problem: bubblewrapProblem(plain) };
}

/**
 * Why bwrap failed, from its own outcome (`run`'s): its last stderr line, else the signal that
 * killed it, else its exit code. Bwrap names a refused user namespace itself (`No permissions to
 * create a new namespace`, `Creating new namespace failed`, `setting up uid map`): only then is
 * the user-namespace fix added; any other cause (a /proc it cannot mount, a setuid install, a
 * seccomp filter) is given in bwrap's words rather than a guess.
 */
function bubblewrapProblem({ code, signal, stderr }) {
  const said = lastLine(stderr);
  if (said !== '' && USERNS_REFUSED.test(said)) return `bwrap cannot create a sandbox here (${said}): ${USERNS_FIX}`;
  const reason =
    said !== ''
      ? said
      : signal === 'SIGSYS'
        ? 'bwrap was killed by SIGSYS (a seccomp filter refused one of its system calls: the container or service this app runs in filters them; allow clone, unshare, mount and pivot_root, e.g. docker run --security-opt seccomp=unconfined)'
        : signal !== null
          ? `bwrap was killed by ${signal}`
          : `bwrap exited with ${code} and said nothing`;
  return `bwrap cannot create a sandbox here: ${reason}`;
}

/** Bwrap's words for a user namespace it may not make (bubblewrap 0.4–0.11). */
const USERNS_REFUSED = /new namespace|user namespace|[ug]id map/i;

const USERNS_FIX =
  'unprivileged user namespaces are refused; as root, allow them (Ubuntu 24.04+: sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; Debian: sysctl kernel.unprivileged_userns_clone=1; elsewhere user.max_user_namespaces > 0)';

/**
 * The Box network tool (box-network.mjs): `{ tool: 'slirp4netns' | null, rootless, problem }`.
 * A root host makes the namespace itself; any other user makes it inside a user namespace of its
 * own (`unshare --user --map-root-user`) and needs `/dev/net/tun` readable and writable (distros
 * give it mode 0666 through udev).
 */
async function probeNetworkTool(bubblewrapWorks) {
  const rootless = process.geteuid?.() !== 0;
  if (!bubblewrapWorks) return { tool: null, rootless, problem: null };
  const [slirp, nsenter, userns] = await Promise.all([
    run('slirp4netns', ['--version']),
    run('nsenter', ['--version']),
    rootless ? run('unshare', ['--user', '--map-root-user', '--net', 'true']) : Promise.resolve({ ok: true }),
  ]);
  const missing = [!slirp.ok && 'slirp4netns', !nsenter.ok && 'nsenter (util-linux)'].filter(Boolean);
  if (missing.length > 0)
    return {
      tool: null,
      rootless,
      problem: `${missing.join(' and ')} not found: install slirp4netns and util-linux for a Box network of its own`,
    };
  if (!userns.ok)
    return {
      tool: null,
      rootless,
      problem: `unshare --user --net failed (${lastLine(userns.stderr) || `exit ${userns.code}`})`,
    };
  if (rootless) {
    try {
      fs.accessSync('/dev/net/tun', fs.constants.R_OK | fs.constants.W_OK);
    } catch (err) {
      return {
        tool: null,
        rootless,
        problem: `/dev/net/tun is not readable and writable by this user (${err.code}); distributions give it mode 0666`,
      };
    }
  }
  return { tool: 'slirp4netns', rootless, problem: null };
}

/**
 * The toolchain files (box-toolchain.mjs) a root host's Box uids cannot read (a Node under
 * /root/.nvm): bwrap runs as such a uid and cannot bind them. Checked as the first Box uid.
 */
async function unreachableByBoxUsers(files) {
  if (files.length === 0) return [];
  const script = 'for f; do test -r "$f" || printf "%s\\n" "$f"; done';
  const outcome = await run('/bin/sh', ['-c', script, 'sh', ...files], {
    uid: BOX_UID_RANGE.first,
    gid: BOX_UID_RANGE.first,
    cwd: '/',
  });
  return outcome.stdout.split('\n').filter(Boolean);
}

/** `'prlimit'` when util-linux's prlimit runs, else `'shell'` (`/bin/sh`'s ulimit), else null. */
async function probeRlimits() {
  if ((await run('prlimit', ['--version'])).ok) return 'prlimit';
  if ((await run('/bin/sh', ['-c', 'ulimit -n 4096 && ulimit -f 2097152'])).ok) return 'shell';
  return null;
}

/** The syscall filter of a host without bubblewrap: none, and nothing to report (hostGaps says why there is no isolation). */
const NO_SYSCALL_FILTER = { kind: 'none', programs: null, problem: null };

let probing;
let isolating;
/**
 * The probe (once per process; see the file comment). Resolves to `{ platform, isolation
 * ('bubblewrap' | 'seatbelt' | 'none': the strongest this machine gives), bubblewrap: { works,
 * problem }, seatbelt: { works, problem } | null, boxUsers, netTool, netRootless, netProblem,
 * rlimits ('prlimit' | 'shell' | null), unsharePid, cgroup (box-limits.mjs), diskBound,
 * syscallFilter ({ kind: 'seccomp' | 'none', programs, problem }: box-seccomp.mjs; 'none' with
 * `problem` null where bubblewrap does not run), toolchain (box-toolchain.mjs), toolchainProblem
 * (why a root host's Box uids cannot run the app's Node, or null) }`.
 */
export function hostFeatures() {
  probing ??= probe().then((features) => {
    if (features.isolation === 'none') {
      probing = undefined;
      isolating = undefined;
    }
    return features;
  });
  return probing;
}

async function probe() {
  const platform = process.platform;
  const toolchain = resolveToolchain();
  if (platform === 'darwin') {
    const { file, args } = probeSeatbeltArgs();
    const outcome = await run(file, args);
    const seatbelt = classifySeatbeltProbe({ exitCode: outcome.code === 0 ? 0 : outcome.code, stderr: outcome.stderr });
    return {
      platform,
      isolation: seatbelt.works ? 'seatbelt' : 'none',
      bubblewrap: { works: false, problem: 'bubblewrap is Linux only' },
      seatbelt: { works: seatbelt.works, problem: seatbelt.reason ?? null },
      boxUsers: false,
      netTool: null,
      netRootless: true,
      netProblem: null,
      rlimits: await probeRlimits(),
      unsharePid: false,
      cgroup: { kind: 'rlimit', notes: ['no cgroups on macOS'] },
      diskBound: false,
      syscallFilter: NO_SYSCALL_FILTER,
      toolchain,
      toolchainProblem: null,
    };
  }
  const bubblewrap = await probeBubblewrap();
  const [network, rlimits, unsharePid, disk, unreachable, syscallFilter] = await Promise.all([
    probeNetworkTool(bubblewrap.works),
    probeRlimits(),
    run('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', 'true']).then((outcome) => outcome.ok),
    diskBound(),
    bubblewrap.boxUsers ? unreachableByBoxUsers([...toolchain.files, ...toolchain.links.map((link) => link.path)]) : [],
    // As the Box commands' bwrap runs: a root host's as a Box uid.
    bubblewrap.works
      ? probeSyscallFilter({ args: PROBE_OPTIONS, uid: bubblewrap.boxUsers ? BOX_UID_RANGE.first : undefined })
      : NO_SYSCALL_FILTER,
  ]);
  return {
    platform,
    isolation: bubblewrap.works ? 'bubblewrap' : 'none',
    bubblewrap: { works: bubblewrap.works, problem: bubblewrap.problem },
    seatbelt: null,
    boxUsers: bubblewrap.boxUsers,
    netTool: network.tool,
    netRootless: network.rootless,
    netProblem: network.problem,
    rlimits,
    unsharePid,
    cgroup: chooseCgroups(),
    diskBound: disk,
    syscallFilter,
    toolchain,
    toolchainProblem:
      unreachable.length === 0
        ? null
        : `the app's Node toolchain (${unreachable.join(', ')}) is in a directory the Boxes' own uids cannot read (this host runs as root and gives each Box an unprivileged uid): install Node where other users can read it (/usr/local, /opt), make its directories readable and searchable by others, or run the app as a user other than root`,
  };
}

/** True when bubblewrap builds a sandbox here (the probe's answer; callers share one promise). */
export function bubblewrapWorks() {
  isolating ??= hostFeatures().then((features) => features.bubblewrap.works);
  return isolating;
}

/** Why this machine gives Boxes no isolation, with the fix (`null` when it gives some). */
export function isolationProblem(features) {
  if (features.isolation !== 'none') return null;
  return features.platform === 'darwin' ? features.seatbelt?.problem : features.bubblewrap.problem;
}

/**
 * What an `allow-all` Box that shares this machine's network reaches besides the internet (the
 * start-up line and the production refusal say it).
 */
export const HOST_NETWORK_REACH =
  "this machine's loopback (other Boxes' ports, the Box host's own port, the app's dev server) and this user's abstract Unix sockets (D-Bus, X11)";

/**
 * Whether `allow-all` Boxes under isolation `mode` share this machine's network: no Box network
 * of their own (box-network.mjs needs bubblewrap and a network tool that works for this user), so
 * they reach HOST_NETWORK_REACH. Plain processes ('none') always do.
 */
export function sharesHostNetwork(features, mode) {
  return mode !== 'bubblewrap' || !features.netTool;
}

/**
 * What Boxes lack on this machine under isolation `mode`, each with how to get it: `[]` when they
 * get isolation (with its seccomp filter under bubblewrap), a Box network, per-Box and
 * per-process limits and every package manager. The
 * start-up line and `startBoxHost(...).degraded` both read it.
 */
export function hostGaps(features, mode) {
  const gaps = [];
  if (mode === 'none') {
    const why = isolationProblem(features);
    gaps.push(
      `Boxes run as plain processes without isolation (filesystem and network of this user)${why ? `: ${why}` : ''}`,
    );
  }
  if (mode === 'bubblewrap' && features.syscallFilter?.kind !== 'seccomp') {
    gaps.push(
      `Boxes get no seccomp filter (io_uring, the key store and nested namespaces stay open to them)${features.syscallFilter?.problem ? `: ${features.syscallFilter.problem}` : ''}`,
    );
  }
  if (mode !== 'none' && sharesHostNetwork(features, mode)) {
    const why = mode === 'bubblewrap' ? features.netProblem : `${mode} gives Boxes no network of their own`;
    gaps.push(`allow-all Boxes share this machine's network and reach ${HOST_NETWORK_REACH}${why ? ` (${why})` : ''}`);
  }
  if (features.cgroup?.kind === 'rlimit' && features.platform === 'linux') {
    gaps.push(
      "no memory or process limit per Box (no writable cgroup below this process's own: run the app in a delegated cgroup v2, e.g. systemd-run --user --scope, or as root)",
    );
  }
  if (features.rlimits === null) gaps.push('no per-process limits (neither prlimit nor /bin/sh ulimit works)');
  if (mode === 'bubblewrap' && features.toolchainProblem) gaps.push(`Runs cannot start: ${features.toolchainProblem}`);
  for (const gap of features.toolchain.missing) {
    gaps.push(
      gap.tool === 'node'
        ? `no Node for Boxes, which run Definitions with it (the app runs on ${features.toolchain.node.runtime}): ${gap.hint}`
        : `no ${gap.tool} for Definitions that need it (${gap.hint})`,
    );
  }
  return gaps;
}

/**
 * One line for `vite dev` and `vite-hub-sandbox host`: the isolation Boxes get, and what is
 * missing for more with how to get it (hostGaps). `mode` is the isolation in force (index.mjs).
 */
export function describeHost(features, mode) {
  const parts = hostGaps(features, mode);
  if (mode !== 'none') parts.unshift(`Boxes run under ${mode}`);
  return `[vite-hub-sandbox] local Box host: ${parts.join('; ')}`;
}
