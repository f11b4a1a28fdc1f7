// Isolation of Box processes: bubblewrap when present (or required), plain processes otherwise.
// Builds the spawn spec (file, argv, host cwd, env, set-up steps) for one command and describes
// the isolation actually in use as an `executionAuthority` object.
//
// Under bubblewrap every command gets its own user, PID, IPC, UTS, cgroup and network namespaces,
// runs as uid/gid 1000 with no capabilities (a host uid of the Box's own on a root host:
// box-user.mjs) under the Box's seccomp filter (box-seccomp.mjs), sees `/proc/sys` read-only and
// the host system directories read-only. Under `deny-all` its network namespace has only its own loopback;
// otherwise the Box's network (box-network.mjs: a namespace per Box with slirp4netns, no host
// loopback) when slirp4netns is installed, else the host's network (reported 'unrestricted').
// The options, env included, reach bwrap through a pipe (`--args`), never the command line that
// `ps` shows. Limits: one cgroup per Box (pids, memory: all its commands together) where the
// cgroup v1/v2 tree is writable, and rlimits (file size, open files, processes; per process by
// nature) always.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BOX_UID, bubblewrapWorks, hostFeatures, isolationProblem } from './host-probe.mjs';
import { seccompArgs } from './box-seccomp.mjs';
import { bwrapClosing, inheritedFds } from './inherited-fds.mjs';
import { seatbeltArgs, seatbeltProfile } from './seatbelt.mjs';
import { SYSTEM_PATH, publicNpmConfig } from './box-toolchain.mjs';
import { installNetworkEnv } from './install-network.mjs';

export { BOX_UID, bubblewrapWorks, hostFeatures };
/** The Box home directory (a Box path). */
export const BOX_HOME = '/home/box';
/** The host name a bubblewrap Box sees (`hostname`, `os.hostname()`). */
export const BOX_HOSTNAME = 'box';
/** Host system directories bound read-only into a bubblewrap Box (when they exist). */
const SYSTEM_DIRS = ['/usr', '/bin', '/lib', '/lib64', '/etc', '/sbin'];
/** Box directories bound read-write besides the Box's work directory (same path inside the sandbox). */
const SHARED_WRITABLE_DIRS = ['/tmp', BOX_HOME];

/** The Box directories a command sees read-write: the work directory, `/tmp` and the home dir. */
function writableDirs(workDir) {
  return [workDir, ...SHARED_WRITABLE_DIRS];
}

/**
 * The PATH of every Box command: the app's own Node and package managers first
 * (box-toolchain.mjs), so `node`, `npm` and their `#!/usr/bin/env node` scripts run the app's
 * Node, then the system directories. `at` maps a host directory to where the Box sees it.
 */
export function boxPath(features, at = (dir) => dir) {
  return [...new Set([...(features?.toolchain?.binDirs ?? []).map(at), ...SYSTEM_PATH.split(':')])].join(':');
}

/** Whether `dir` is one of the system directories or below one (bound already). */
function underSystemDir(dir) {
  return SYSTEM_DIRS.some((system) => dir === system || dir.startsWith(`${system}/`));
}

/** Box limits: `pids` per Box (its cgroup, where writable); the rlimits per process, always. */
export const BOX_LIMITS = {
  /** Processes and threads of one Box, all its commands together (its cgroup); also the RLIMIT_NPROC value. */
  pids: 512,
  /** Largest file a command may write, in bytes (RLIMIT_FSIZE). */
  fileBytes: 1024 * 1024 * 1024,
  /** Open files per process (RLIMIT_NOFILE). */
  openFiles: 4096,
};

/**
 * The open-files limit of a Box's processes, given `/proc/self/limits` as text: BOX_LIMITS.openFiles,
 * or this process's hard limit when it is lower. A process that is not privileged cannot raise
 * its hard limit, so prlimit and ulimit would refuse a higher one and every command would fail at
 * its start.
 */
export function openFilesWithin(limits) {
  const hard = /^Max open files\s+\S+\s+(\d+)/m.exec(limits)?.[1];
  return hard === undefined ? BOX_LIMITS.openFiles : Math.min(BOX_LIMITS.openFiles, Number(hard));
}

let openFilesLimit;
/** openFilesWithin this process's limits, read once; BOX_LIMITS.openFiles where there is no procfs (macOS). */
export function boxOpenFiles() {
  if (openFilesLimit === undefined) {
    let limits = '';
    try {
      limits = fs.readFileSync('/proc/self/limits', 'utf8');
    } catch {
      // no procfs: the Box's own limit
    }
    openFilesLimit = openFilesWithin(limits);
  }
  return openFilesLimit;
}

/**
 * The limits a Box's commands run under, as the session reports them (`limits`): `enforcedBy`
 * ('cgroup-v2' | 'cgroup-v1' | 'rlimit': what bounds processes and memory), `processes` (per
 * Box, all its commands together, or per user through RLIMIT_NPROC; null when nothing bounds
 * them), `memoryBytes` (per Box, likewise; null when no cgroup applies), `diskBytes` (the Box's
 * writable space, a tmpfs; null when the host cannot mount one), `fileBytes` and `openFiles`
 * (rlimits, per process; null when neither prlimit nor /bin/sh's ulimit works here),
 * `syscallFilter` ('seccomp': the Box's filter, box-seccomp.mjs, applies to every command, which
 * needs `isolation` 'bubblewrap'; 'none' otherwise, the start-up line says why).
 */
export function limitsReport(features, { memoryBytes, diskBytes, isolation }) {
  const enforcedBy = features?.cgroup?.kind ?? 'rlimit';
  const rlimits = features?.rlimits ?? null;
  return {
    enforcedBy,
    processes: enforcedBy !== 'rlimit' || rlimits === 'prlimit' ? BOX_LIMITS.pids : null,
    memoryBytes: enforcedBy === 'rlimit' ? null : memoryBytes,
    diskBytes: features?.diskBound ? diskBytes : null,
    fileBytes: rlimits === null ? null : BOX_LIMITS.fileBytes,
    openFiles: rlimits === null ? null : boxOpenFiles(),
    syscallFilter: syscallFilter(isolation, features),
  };
}

/**
 * The syscall filter Box commands run under: 'seccomp' (the Box's, box-seccomp.mjs) under
 * bubblewrap once the probe loaded it, else 'none'.
 */
export function syscallFilter(isolation, features) {
  return isolation === 'bubblewrap' &&
    features?.syscallFilter?.kind === 'seccomp' &&
    features.syscallFilter.programs !== null
    ? 'seccomp'
    : 'none';
}

/** The isolation option's values. */
const ISOLATION_OPTIONS = ['auto', 'bubblewrap', 'seatbelt', 'none'];

/**
 * Resolves the `isolation` option against the probe (host-probe.mjs): 'auto' (default) takes the
 * strongest this machine gives (bubblewrap on Linux, Seatbelt on macOS), 'bubblewrap' and
 * 'seatbelt' require theirs, 'none' runs plain processes. In production (`production: true`,
 * NODE_ENV=production) 'auto' never degrades silently: without isolation it throws, and only an
 * explicit 'none' runs unisolated Boxes. Returns 'bubblewrap' | 'seatbelt' | 'none'; a refusal
 * is an Error whose message names what is missing and how to get it.
 */
export function resolveIsolation(option = 'auto', features, { production = false } = {}) {
  if (!ISOLATION_OPTIONS.includes(option)) {
    throw new TypeError(
      `isolation must be ${ISOLATION_OPTIONS.map((o) => `'${o}'`).join(', ')}, got ${JSON.stringify(option)}`,
    );
  }
  if (option === 'none') return 'none';
  const available = features.isolation;
  const problem = isolationProblem(features);
  if (option !== 'auto' && option !== available) {
    throw new Error(
      `isolation '${option}' was requested but this machine gives ${available === 'none' ? 'none' : `'${available}'`}${problem ? `: ${problem}` : ''}`,
    );
  }
  if (available === 'none' && production) {
    throw new Error(
      `the local Box host refuses to run Boxes without isolation in production (production: true, or NODE_ENV=production without it)${problem ? `: ${problem}` : ''}; set local: { isolation: 'none' } (configureSandbox or hubSandbox) to accept that explicitly`,
    );
  }
  return available;
}

/**
 * What a Box's commands may do, honestly: `network` is 'none' only when it is really cut off,
 * 'restricted' with a Box network (outbound, without the host's loopback). `isolation` is the
 * mode in force ('bubblewrap' | 'seatbelt' | 'none').
 */
export function executionAuthority(isolation, networkDenied = false, boxNetwork = false) {
  const sandboxed = isolation !== 'none';
  let network = 'unrestricted';
  if (sandboxed && networkDenied) network = 'none';
  else if (isolation === 'bubblewrap' && boxNetwork) network = 'restricted';
  return {
    isolation: sandboxed ? 'process' : 'none',
    network,
    filesystem: { access: 'read-write', scope: sandboxed ? 'sandbox' : 'host' },
    // Without isolation a command runs as the app's user: its files (~/.ssh, ~/.npmrc) and the
    // app process's environment (/proc/<pid>/environ) are within reach, whatever env it was given.
    environment: sandboxed ? 'selected' : 'ambient',
    credentials: sandboxed ? 'none' : 'ambient',
    processes: sandboxed ? 'restricted' : 'arbitrary',
  };
}

/** Where a bubblewrap Box shows toolchain paths that its own directories would cover. */
const TOOLCHAIN_ROOT = '/opt/vite-hub-sandbox/toolchain';
/** Where a bubblewrap Box sees the user's npm config without credentials (NPM_CONFIG_USERCONFIG). */
export const BOX_USER_NPMRC = '/opt/vite-hub-sandbox/npmrc';

/**
 * The Box path of a toolchain host path (box-toolchain.mjs): its own path, so its links and
 * scripts work as on the host, unless that lies where the sandbox puts the Box's own directories
 * (`/tmp`, the home, the work directory) or its `/dev` and `/proc`: a bind there would make its
 * mount points in files the Box can write (and a Box could aim them with a symlink); those are
 * shown below TOOLCHAIN_ROOT instead.
 */
export function toolchainBoxPath(hostPath, workDir) {
  const reserved = [...writableDirs(workDir), '/vercel', '/workspace', '/dev', '/proc'];
  return reserved.some((dir) => hostPath === dir || hostPath.startsWith(`${dir}/`))
    ? `${TOOLCHAIN_ROOT}${hostPath}`
    : hostPath;
}

/**
 * The bwrap options that show the app's toolchain read-only (box-toolchain.mjs): the Node binary
 * and each package manager's package or file, the CA files the npm configs name (their content,
 * through fds `caFileFds`: a root host's Box uid may not reach a private one), the links they were
 * found through, and npm's
 * global config (beside the app's Node, through fd `npmrcFd`) and user config (at BOX_USER_NPMRC,
 * through fd `userNpmrcFd`) without credentials. Paths the system binds already show are left as
 * they are.
 */
function toolchainArgs(toolchain, workDir, { npmrcFd, userNpmrcFd, caFileFds }) {
  if (!toolchain) return [];
  const at = (hostPath) => toolchainBoxPath(hostPath, workDir);
  const args = [];
  for (const file of toolchain.files) if (!underSystemDir(file)) args.push('--ro-bind', file, at(file));
  for (const { file, fd } of caFileFds) args.push('--ro-bind-data', String(fd), at(file));
  for (const link of toolchain.links)
    if (!underSystemDir(link.path)) args.push('--symlink', at(link.target), at(link.path));
  if (npmrcFd !== undefined) args.push('--ro-bind-data', String(npmrcFd), at(toolchain.npmrc));
  if (userNpmrcFd !== undefined) args.push('--ro-bind-data', String(userNpmrcFd), BOX_USER_NPMRC);
  return args;
}

/**
 * Bubblewrap options (without the command) for a Box at host dir `root`; `seccompFds` are the fds
 * bwrap reads the Box filter's programs from (none: no filter).
 */
function bubblewrapArgs({
  root,
  workDir,
  ownNet,
  env,
  cwd,
  resolvConfFd,
  resolvConf,
  toolchain,
  toolchainFds,
  seccompFds,
  readOnlyFileFds,
}) {
  const args = ['--unshare-all', '--unshare-user', '--uid', String(BOX_UID), '--gid', String(BOX_UID)];
  if (!ownNet) args.push('--share-net');
  // Its own UTS namespace (--unshare-all) named BOX_HOSTNAME, not after the host machine.
  args.push(
    '--hostname',
    BOX_HOSTNAME,
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...seccompArgs(seccompFds),
  );
  for (const dir of SYSTEM_DIRS) {
    let st;
    try {
      st = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else if (st.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  args.push('--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys', '--dev', '/dev');
  if (resolvConf) args.push('--ro-bind-data', String(resolvConfFd), resolvConf.path);
  for (const dir of writableDirs(workDir)) args.push('--bind', path.join(root, dir), dir);
  args.push(...toolchainArgs(toolchain, workDir, toolchainFds));
  for (const { path: file, fd } of readOnlyFileFds) args.push('--ro-bind-data', String(fd), file);
  args.push('--remount-ro', '/', '--clearenv');
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
  args.push('--chdir', cwd);
  return args;
}

/** The first fd of a bubblewrap command's `boxFiles` (fd 3 carries bwrap's options: command.mjs). */
export const BOX_FILES_FD = 4;

/** The address of slirp4netns's built-in DNS forwarder inside a Box network. */
export const BOX_DNS = '10.0.2.3';

let boxResolvConf;
/**
 * The resolv.conf of a Box on a Box network: `{ path, data }`. `data` names slirp4netns's DNS
 * forwarder (which asks the host's resolver, a loopback one such as systemd-resolved's
 * 127.0.0.53 included) and keeps the host's `search` and `options` lines; `path` is where the
 * Box's /etc/resolv.conf leads (the target of the host's symlink, e.g.
 * /run/systemd/resolve/stub-resolv.conf, created in the Box's own root).
 */
export function resolvConfForBoxNetwork() {
  if (boxResolvConf) return boxResolvConf;
  let host = '';
  try {
    host = fs.readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    // no host resolv.conf: the forwarder alone
  }
  let target = '/etc/resolv.conf';
  try {
    target = path.resolve('/etc', fs.readlinkSync('/etc/resolv.conf'));
  } catch {
    // a regular file (or none): bound over /etc/resolv.conf itself
  }
  const kept = host.split('\n').filter((line) => /^\s*(search|domain|options)\s/.test(line));
  boxResolvConf = { path: target, data: [`nameserver ${BOX_DNS}`, ...kept, ''].join('\n') };
  return boxResolvConf;
}

/**
 * The command line that runs `command args` under the rlimits (per process by nature;
 * RLIMIT_NPROC counted per user): util-linux's prlimit, else /bin/sh's ulimit (file size in
 * 512-byte blocks, as POSIX sh counts them; open files) before an exec of the command, which
 * still gets its argv untouched (`"$0" "$@"`), else the command alone (limitsReport says so).
 */
export function withRlimits(rlimits, command, args) {
  if (rlimits === 'prlimit') {
    return [
      'prlimit',
      `--fsize=${BOX_LIMITS.fileBytes}`,
      `--nofile=${boxOpenFiles()}`,
      `--nproc=${BOX_LIMITS.pids}`,
      '--',
      command,
      ...args,
    ];
  }
  if (rlimits === 'shell') {
    const script = `ulimit -f ${BOX_LIMITS.fileBytes / 512} && ulimit -n ${boxOpenFiles()} && exec "$0" "$@"`;
    return ['/bin/sh', '-c', script, command, ...args];
  }
  return [command, ...args];
}

/**
 * Spawn spec for one Box command: `{ file, args, cwd (host), env, argsData?, sandboxed }`.
 * `cwd` is a Box path of an existing directory, `cwdHost` its checked host path; `env` holds
 * only the selected variables (after PATH, HOME, npm's config and the app's CA and proxy variables,
 * install-network.mjs, which it may override); `workDir` is the Box's work directory (`/vercel/sandbox` or
 * `/workspace`), bound read-write; `cgroup` is the Box's (box-limits.mjs makeBoxCgroup:
 * `{ dirs, problems }`), which the command's processes join. Under bubblewrap the options travel
 * in `argsData`, written to fd 3 once bwrap is in the Box's cgroups (command.mjs), so the
 * sandbox and its cgroup namespace start there; fds 4… carry files made in the sandbox and the
 * Box filter's programs (`boxFiles`: a Box network's resolv.conf, npm's global config without
 * credentials, box-seccomp.mjs's programs where the probe loaded them). `boxUid` (box-user.mjs) is the host uid (= gid) bwrap runs as,
 * when the Box has one: `uid`/`gid` of the spawn, or nsenter's `--setuid`/`--setgid` once it
 * has entered the Box network (which only the host's root may enter). `network` is the Box's
 * (box-network.mjs: `{ netns, userns? }`): a rootless one is entered with its user namespace.
 * `readOnlyFiles` (`[{ path, data }]`, bubblewrap only) are files shown read-only at those Box
 * paths, e.g. a parked process's script (parked-node.mjs); `stdin: 'pipe'` gives the command a
 * stdin the host writes (`/dev/null` otherwise).
 * Under Seatbelt (macOS) the command runs through `sandbox-exec` with the Box's profile
 * (seatbelt.mjs): it writes only the Box directory, reads nothing of the user's home but the
 * app's toolchain, and has no network under `deny-all`.
 */
export function spawnSpec({
  isolation,
  root,
  workDir,
  networkDenied,
  network,
  command,
  args,
  cwd,
  cwdHost,
  env,
  features,
  cgroup,
  boxUid,
  readOnlyFiles = [],
  stdin = 'ignore',
}) {
  const limited = withRlimits(features?.rlimits ?? null, command, args);
  const leaked = inheritedFds();
  const PATH = boxPath(features);
  if (isolation === 'bubblewrap') {
    const toolchain = features?.toolchain;
    // npm's global and user configs without credentials (box-toolchain.mjs publicNpmConfig): an
    // install in the Box reaches the registry the app's npm reaches, through its proxy and CA.
    // Their CA files are named where toolchainArgs shows them (box-toolchain.mjs npmCaFiles).
    const caFiles = toolchain?.caFiles ?? [];
    const shown = (named) => toolchainBoxPath(caFiles.find((ca) => ca.named === named)?.file ?? named, workDir);
    const npmrc =
      toolchain?.npmrcText != null && !underSystemDir(toolchain.npmrc)
        ? publicNpmConfig(toolchain.npmrcText, { cafile: shown })
        : null;
    const userNpmrc =
      toolchain?.userNpmrcText != null ? publicNpmConfig(toolchain.userNpmrcText, { cafile: shown }) : null;
    const npmEnv = userNpmrc === null ? {} : { NPM_CONFIG_USERCONFIG: BOX_USER_NPMRC };
    // The app's CA and proxy variables (install-network.mjs), their CA files where the Box sees them.
    const networkEnv = installNetworkEnv(toolchain?.network, shown);
    const fullEnv = {
      PATH: boxPath(features, (dir) => toolchainBoxPath(dir, workDir)),
      HOME: BOX_HOME,
      ...npmEnv,
      ...networkEnv,
      ...env,
    };
    const netns = network?.netns;
    // On a Box network the host's resolver may be on the host's loopback, which the Box cannot
    // reach: its resolv.conf names slirp4netns's forwarder instead (fd 4).
    const resolvConf = netns ? resolvConfForBoxNetwork() : undefined;
    // A Box network: bwrap runs inside it (nsenter) and keeps it (--share-net). A rootless one
    // (host-probe.mjs) is owned by a user namespace of its own, entered with it.
    const asBoxUser = boxUid === undefined ? [] : ['--setuid', String(boxUid), '--setgid', String(boxUid)];
    const enter = network?.userns
      ? ['nsenter', `--user=${network.userns}`, `--net=${netns}`, '--preserve-credentials', '--']
      : ['nsenter', `--net=${netns}`, ...asBoxUser, '--'];
    // Files made in the sandbox from host data and the filter's programs, one fd each from 4
    // (command.mjs).
    const boxFiles = [];
    const fdOf = (data) => (data === null ? undefined : BOX_FILES_FD + boxFiles.push(data) - 1);
    const resolvConfFd = fdOf(resolvConf?.data ?? null);
    const toolchainFds = { npmrcFd: fdOf(npmrc), userNpmrcFd: fdOf(userNpmrc) };
    // One bind per file, however many names lead to it.
    const caShown = caFiles.filter(
      (ca, i) => !underSystemDir(ca.file) && caFiles.findIndex((other) => other.file === ca.file) === i,
    );
    toolchainFds.caFileFds = caShown.map((ca) => ({ file: ca.file, fd: fdOf(ca.data) }));
    const seccompFds =
      syscallFilter(isolation, features) === 'seccomp' ? features.syscallFilter.programs.map(fdOf) : [];
    const readOnlyFileFds = readOnlyFiles.map(({ path: file, data }) => ({ path: file, fd: fdOf(data) }));
    // bwrap closes the fds this process would leak into the Box (inherited-fds.mjs) first, then
    // reads its options from fd 3.
    const bwrap = ['bwrap', ...bwrapClosing(leaked, BOX_FILES_FD + boxFiles.length), '--args', '3', '--', ...limited];
    const [file, ...rest] = netns ? [...enter, ...bwrap] : bwrap;
    return {
      file,
      args: rest,
      inheritedFds: leaked,
      ...(boxUid !== undefined && !netns ? { uid: boxUid, gid: boxUid } : {}),
      argsData: `${bubblewrapArgs({ root, workDir, ownNet: networkDenied && !netns, env: fullEnv, cwd, resolvConfFd, resolvConf, toolchain, toolchainFds, seccompFds, readOnlyFileFds }).join('\0')}\0`,
      boxFiles,
      stdin,
      cgroup: cgroup ?? null,
      cwd: root,
      env: { PATH: SYSTEM_PATH },
      sandboxed: true,
      pidNamespace: true,
    };
  }
  const hostEnv = {
    PATH,
    HOME: path.join(root, BOX_HOME),
    TMPDIR: path.join(root, 'tmp'),
    ...installNetworkEnv(features?.toolchain?.network),
    ...env,
  };
  // Without isolation npm reads the user's own config as it does for the app (its HOME is the
  // Box's, so it is named); Seatbelt hides the home, so it gets none.
  const userConfig =
    isolation === 'none' && features?.toolchain?.userNpmrc
      ? { NPM_CONFIG_USERCONFIG: features.toolchain.userNpmrc }
      : {};
  if (isolation === 'seatbelt') {
    const toolchain = features?.toolchain;
    const profile = seatbeltProfile({
      writableDirs: [root],
      readableDirs: toolchain
        ? [...toolchain.files, ...toolchain.caFiles.map((ca) => ca.file), ...toolchain.links.map((link) => link.path)]
        : [],
      hiddenDirs: [os.homedir()],
      networkDenied,
    });
    // sandbox-exec takes an absolute program (seatbelt.mjs): /bin/sh of the rlimits, else env(1)
    // looking the command up on the Box's PATH.
    const [program, ...rest] = path.isAbsolute(limited[0]) ? limited : ['/usr/bin/env', ...limited];
    const { file, args: sandboxArgs } = seatbeltArgs(profile, program, rest);
    return {
      file,
      args: sandboxArgs,
      cwd: cwdHost,
      env: hostEnv,
      stdin,
      inheritedFds: leaked,
      cgroup: null,
      sandboxed: true,
      pidNamespace: false,
    };
  }
  // No isolation: still one PID namespace per command when `unshare` can make one (root), so
  // every process of the command, daemons included, ends with it.
  const pidNs = features?.unsharePid ? ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'] : [];
  const [file, ...rest] = [...pidNs, ...limited];
  return {
    file,
    args: rest,
    cwd: cwdHost,
    env: { ...userConfig, ...hostEnv },
    stdin,
    inheritedFds: leaked,
    cgroup: cgroup ?? null,
    sandboxed: false,
    pidNamespace: pidNs.length > 0,
  };
}

/** Whether a Box path can be a command cwd under this isolation (bubblewrap only shows some dirs). */
export function cwdVisible(isolation, boxCwd, workDir) {
  if (isolation !== 'bubblewrap') return true;
  return writableDirs(workDir).some((dir) => boxCwd === dir || boxCwd.startsWith(`${dir}/`));
}
