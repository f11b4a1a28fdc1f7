// Isolation of Box processes: bubblewrap when present (or required), plain processes otherwise.
// Builds the spawn spec (file, argv, host cwd, env, set-up steps) for one command and describes
// the isolation actually in use as an `executionAuthority` object.
//
// Under bubblewrap every command gets its own user, PID, IPC, UTS, cgroup and network namespaces,
// runs as uid/gid 1000 with no capabilities (a host uid of the Box's own on a root host:
// box-user.mjs), sees `/proc/sys` read-only and the host system
// directories read-only. Under `deny-all` its network namespace has only its own loopback;
// otherwise the Box's network (box-network.mjs: a namespace per Box with slirp4netns, no host
// loopback) when slirp4netns is installed, else the host's network (reported 'unrestricted').
// The options, env included, reach bwrap through a pipe (`--args`), never the command line that
// `ps` shows. Limits: one cgroup per Box (pids, memory: all its commands together) where the
// cgroup v1/v2 tree is writable, and rlimits (file size, open files, processes; per process by
// nature) always.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { diskBound } from './box-disk.mjs';
import { chooseCgroups } from './box-limits.mjs';
import { BOX_UID_RANGE } from './box-user.mjs';

/** Minimal PATH of every Box command. */
export const BOX_PATH = '/usr/local/bin:/usr/bin:/bin';
/** The Box home directory (a Box path). */
export const BOX_HOME = '/home/box';
/** Host system directories bound read-only into a bubblewrap Box (when they exist). */
const SYSTEM_DIRS = ['/usr', '/bin', '/lib', '/lib64', '/etc', '/sbin'];
/** Box directories bound read-write besides the Box's work directory (same path inside the sandbox). */
const SHARED_WRITABLE_DIRS = ['/tmp', BOX_HOME];

/** The Box directories a command sees read-write: the work directory, `/tmp` and the home dir. */
function writableDirs(workDir) {
  return [workDir, ...SHARED_WRITABLE_DIRS];
}

/** The uid and gid of Box commands under bubblewrap (not root; mapped to the Box's host uid, box-user.mjs). */
export const BOX_UID = 1000;

/** Whether `file args` exits 0 (within 10 s); `options` are execFile's (a `uid` to run it as). */
function run(file, args, options = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: BOX_PATH }, timeout: 10_000, ...options }, (err) => resolve(!err));
  });
}

/** The probe's bwrap options: every namespace a Box command gets, the host's `/` read-only. */
const PROBE_ARGS = ['--unshare-all', '--unshare-user', '--uid', String(BOX_UID), '--gid', String(BOX_UID), '--die-with-parent', '--ro-bind', '/', '/', 'true'];

let bubblewrap;
let bubblewrapAnswer;
/**
 * `{ works, boxUsers }`: whether `bwrap` runs and can build a sandbox here, one probe run that
 * makes every namespace a Box command gets (a missing bwrap fails it too), and whether it does as
 * an unprivileged uid on a root host (box-user.mjs). On a root host that unprivileged run is tried
 * first (the one Box commands will use), the privileged one only when it fails: one child process
 * in the usual case. Callers share one probe; a success is kept for the process, a failure is not
 * (the next host start probes again, so a probe that failed once, e.g. timed out on a loaded
 * machine, never leaves the process without isolation for good).
 */
function probeBubblewrap() {
  bubblewrap ??= (async () => {
    const asBoxUser = { uid: BOX_UID_RANGE.first, gid: BOX_UID_RANGE.first, cwd: '/' };
    if (process.geteuid?.() === 0 && (await run('bwrap', PROBE_ARGS, asBoxUser))) return { works: true, boxUsers: true };
    return { works: await run('bwrap', PROBE_ARGS), boxUsers: false };
  })().then((answer) => {
    if (!answer.works) {
      bubblewrap = undefined;
      bubblewrapAnswer = undefined;
    }
    return answer;
  });
  return bubblewrap;
}

/** True when `bwrap` runs and can build a sandbox here (probeBubblewrap; callers share one answer). */
export function bubblewrapWorks() {
  bubblewrapAnswer ??= probeBubblewrap().then((answer) => answer.works);
  return bubblewrapAnswer;
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
 * What this host offers beyond bwrap (probed once): `netTool` ('slirp4netns' when it and
 * nsenter run, else null), `cgroup` (box-limits.mjs: the chosen cgroup v2/v1 mechanism or
 * rlimits only), `diskBound` (a sized tmpfs per Box can be mounted), whether `unshare --pid`
 * works for isolation 'none', and `boxUsers`: the host runs as root and bwrap works as an
 * unprivileged uid, so each Box's commands run as a host uid of its own (box-user.mjs).
 */
let features;
export function hostFeatures() {
  features ??= (async () => {
    const [unsharePid, slirp, nsenter, disk, boxUsers] = await Promise.all([
      run('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', 'true']),
      run('slirp4netns', ['--version']),
      run('nsenter', ['--version']),
      diskBound(),
      probeBubblewrap().then((answer) => answer.boxUsers),
    ]);
    return {
      netTool: slirp && nsenter ? 'slirp4netns' : null,
      cgroup: chooseCgroups(),
      diskBound: disk,
      unsharePid,
      boxUsers,
    };
  })();
  return features;
}

/**
 * The limits a Box's commands run under, as the session reports them (`limits`): `enforcedBy`
 * ('cgroup-v2' | 'cgroup-v1' | 'rlimit': what bounds processes and memory), `processes` (per
 * Box, all its commands together), `memoryBytes` (per Box, likewise; null when no cgroup applies), `diskBytes` (the Box's
 * writable space, a tmpfs; null when the host cannot mount one), `fileBytes` and `openFiles`
 * (rlimits, always).
 */
export function limitsReport(features, { memoryBytes, diskBytes }) {
  const enforcedBy = features?.cgroup?.kind ?? 'rlimit';
  return {
    enforcedBy,
    processes: BOX_LIMITS.pids,
    memoryBytes: enforcedBy === 'rlimit' ? null : memoryBytes,
    diskBytes: features?.diskBound ? diskBytes : null,
    fileBytes: BOX_LIMITS.fileBytes,
    openFiles: BOX_LIMITS.openFiles,
  };
}

/**
 * Resolves the `isolation` option: 'auto' (default) uses bubblewrap when it works, 'bubblewrap'
 * requires it (throws otherwise), 'none' runs plain processes. Returns 'bubblewrap' | 'none'.
 */
export async function resolveIsolation(option = 'auto') {
  if (option === 'none') return 'none';
  if (option !== 'auto' && option !== 'bubblewrap') {
    throw new TypeError(`isolation must be 'auto', 'bubblewrap' or 'none', got ${JSON.stringify(option)}`);
  }
  const works = await bubblewrapWorks();
  if (option === 'bubblewrap' && !works) {
    throw new Error('isolation "bubblewrap" was requested but bwrap is missing or cannot create a sandbox');
  }
  return works ? 'bubblewrap' : 'none';
}

/**
 * What a Box's commands may do, honestly: `network` is 'none' only when it is really cut off,
 * 'restricted' with a Box network (outbound, without the host's loopback).
 */
export function executionAuthority(isolation, networkDenied = false, boxNetwork = false) {
  const sandboxed = isolation === 'bubblewrap';
  let network = 'unrestricted';
  if (sandboxed && networkDenied) network = 'none';
  else if (sandboxed && boxNetwork) network = 'restricted';
  return {
    isolation: sandboxed ? 'process' : 'none',
    network,
    filesystem: { access: 'read-write', scope: sandboxed ? 'sandbox' : 'host' },
    environment: 'selected',
    credentials: 'none',
    processes: sandboxed ? 'restricted' : 'arbitrary',
  };
}

/** Bubblewrap options (without the command) for a Box at host dir `root`. */
function bubblewrapArgs({ root, workDir, ownNet, env, cwd, resolvConf }) {
  const args = ['--unshare-all', '--unshare-user', '--uid', String(BOX_UID), '--gid', String(BOX_UID)];
  if (!ownNet) args.push('--share-net');
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL');
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
  if (resolvConf) args.push('--ro-bind-data', '6', resolvConf.path);
  for (const dir of writableDirs(workDir)) args.push('--bind', path.join(root, dir), dir);
  args.push('--remount-ro', '/', '--clearenv');
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
  args.push('--chdir', cwd, '--info-fd', '4', '--block-fd', '5');
  return args;
}

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

/** `prlimit` options for the rlimits (per process by nature; RLIMIT_NPROC counted per user). */
function rlimitArgs() {
  return [`--fsize=${BOX_LIMITS.fileBytes}`, `--nofile=${BOX_LIMITS.openFiles}`, `--nproc=${BOX_LIMITS.pids}`, '--'];
}

/**
 * Spawn spec for one Box command: `{ file, args, cwd (host), env, argsData?, sandboxed }`.
 * `cwd` is a Box path of an existing directory, `cwdHost` its checked host path; `env` holds
 * only the selected variables; `workDir` is the Box's work directory (`/vercel/sandbox` or
 * `/workspace`), bound read-write; `cgroup` is the Box's (box-limits.mjs makeBoxCgroup:
 * `{ dirs, problems }`), which the command's processes join. Under bubblewrap the options travel
 * in `argsData` (written to fd 3); fd 4 reports the sandbox's pid and fd 5 releases the command
 * once it is in the Box's cgroups (command.mjs); on a Box network fd 6 carries the Box's
 * resolv.conf (`resolvData`). `boxUid` (box-user.mjs) is the host uid (= gid) bwrap runs as,
 * when the Box has one: `uid`/`gid` of the spawn, or nsenter's `--setuid`/`--setgid` once it
 * has entered the Box network (which only the host's root may enter).
 */
export function spawnSpec({ isolation, root, workDir, networkDenied, netns, command, args, cwd, cwdHost, env, features, cgroup, boxUid }) {
  const limited = [...rlimitArgs(), command, ...args];
  if (isolation === 'bubblewrap') {
    const fullEnv = { PATH: BOX_PATH, HOME: BOX_HOME, ...env };
    // On a Box network the host's resolver may be on the host's loopback, which the Box cannot
    // reach: its resolv.conf names slirp4netns's forwarder instead (fd 6).
    const resolvConf = netns ? resolvConfForBoxNetwork() : undefined;
    // A Box network: bwrap runs inside it (nsenter) and keeps it (--share-net).
    const bwrap = ['bwrap', '--args', '3', '--', 'prlimit', ...limited];
    const asBoxUser = boxUid === undefined ? [] : ['--setuid', String(boxUid), '--setgid', String(boxUid)];
    const [file, ...rest] = netns ? ['nsenter', `--net=${netns}`, ...asBoxUser, '--', ...bwrap] : bwrap;
    return {
      file,
      args: rest,
      ...(boxUid !== undefined && !netns ? { uid: boxUid, gid: boxUid } : {}),
      argsData: `${bubblewrapArgs({ root, workDir, ownNet: networkDenied && !netns, env: fullEnv, cwd, resolvConf }).join('\0')}\0`,
      resolvData: resolvConf?.data,
      cgroup: cgroup ?? null,
      cwd: root,
      env: { PATH: BOX_PATH },
      sandboxed: true,
      pidNamespace: true,
    };
  }
  // No isolation: still one PID namespace per command when `unshare` can make one (root), so
  // every process of the command, daemons included, ends with it.
  const pidNs = features?.unsharePid ? ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'] : [];
  const [file, ...rest] = [...pidNs, 'prlimit', ...limited];
  return {
    file,
    args: rest,
    cwd: cwdHost,
    env: { PATH: BOX_PATH, HOME: path.join(root, BOX_HOME), ...env },
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
