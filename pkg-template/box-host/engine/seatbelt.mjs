// macOS isolation of Box processes through Seatbelt: a pure generator of the SBPL profile that
// `/usr/bin/sandbox-exec -p` applies, its argv, and a start-up probe (no macOS API is called here).
// The Linux twin is isolation.mjs (bubblewrap); a Box here likewise reads the system and its
// toolchain, writes only its own directories, and gets the network only when it is allowed.
//
// Sources (the local-isolation reference, sections 0 and 4): CDX = openai/codex
// `codex-rs/core/src/seatbelt_base_policy.sbpl`, `seatbelt_network_policy.sbpl`,
// `codex-rs/sandboxing/src/seatbelt.rs`; SRT = anthropic-experimental/sandbox-runtime
// `src/sandbox/macos-sandbox-utils.ts`. Rule ORDER matters: for filtered rules of one operation
// the last matching rule wins (SRT `generateReadRules` comment "later rules take precedence";
// CDX emits its `(deny file-read* ...)` credential rules after `(allow file-read*)`; bugs from the
// wrong order were fixed in nolabs-ai/nono#971 and empathic/clash#295). Apple documents none of it.
import path from 'node:path';

/** The one sandbox-exec ever run: an absolute path, never a PATH lookup (CDX `seatbelt.rs`). */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** Exit status of sandbox-exec when `sandbox_apply` fails, e.g. nested under another profile. */
const EX_NESTED = 71;

/**
 * Directories every Box reads (canonical spellings; the `/etc`, `/var` forms are added by
 * `spellings`): system binaries, libraries and frameworks (`/System` holds the dyld shared cache
 * and the Cryptexes on macOS 13+), `/usr` (with `/usr/local`), Homebrew (`/opt/homebrew`, whose
 * node links libraries from `/opt/homebrew/lib`), `/etc`, the tz database `/etc/localtime` points
 * into, `/var/select` (macOS `/bin/sh` execs the shell named there), Command Line Tools
 * (under `/Library`) and Xcode for `git`/`xcrun` (reference section 4; CDX
 * `restricted_read_only_platform_defaults.sbpl`).
 */
const SYSTEM_READ_DIRS = [
  '/System',
  '/usr',
  '/bin',
  '/sbin',
  '/Library',
  '/opt/homebrew',
  '/private/etc',
  '/private/var/db/timezone',
  '/private/var/db/dyld',
  '/private/var/select',
  '/Applications/Xcode.app',
];
/** Single files every Box reads: the xcode-select link that `/usr/bin/git`'s shim follows. */
const SYSTEM_READ_FILES = ['/private/var/db/xcode_select_link', '/dev/stdin', '/dev/stdout', '/dev/stderr'];
/** Devices a Box may read and write data to (SRT device rules; CDX `/dev/null`). */
const DATA_DEVICES = ['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/tty', '/dev/dtracehelper'];

/**
 * sysctls Node, libuv and V8 read (CDX and SRT lists, trimmed to what they need): all of `hw.`
 * (cpu count, memory size, page size, cpu features), `machdep.cpu.` (os.cpus() model),
 * `kern.boottime` (os.uptime), `kern.hostname`/`ostype`/`osrelease`/`version` (os.hostname,
 * os.release, os.version), `vm.loadavg` (os.loadavg); `kern.proc.pid.`/`pgrp.` (the process's
 * own data; CDX). Not `kern.proc.all`: a Box does not list the host's processes.
 */
const SYSCTL_NAMES = [
  'kern.argmax',
  'kern.boottime',
  'kern.hostname',
  'kern.maxfiles',
  'kern.maxfilesperproc',
  'kern.maxproc',
  'kern.ngroups',
  'kern.osproductversion',
  'kern.osrelease',
  'kern.ostype',
  'kern.osvariant_status',
  'kern.osversion',
  'kern.secure_kernel',
  'kern.usrstack64',
  'kern.version',
  'machdep.ptrauth_enabled',
  'sysctl.proc_cputype',
  'vm.loadavg',
];
const SYSCTL_PREFIXES = ['hw.', 'machdep.cpu.', 'kern.proc.pgrp.', 'kern.proc.pid.'];

/** Mach services without the network: directory lookups, getpwuid for os.userInfo() (CDX base). */
const MACH_SERVICES = ['com.apple.system.opendirectoryd.libinfo'];
/** Mach services with the network: DNS configuration, networkd, TLS trust (CDX network policy). */
const NETWORK_MACH_SERVICES = [
  'com.apple.SecurityServer',
  'com.apple.SystemConfiguration.DNSConfiguration',
  'com.apple.SystemConfiguration.configd',
  'com.apple.networkd',
  'com.apple.ocspd',
  'com.apple.trustd.agent',
];

/** `p` as a checked, normalised absolute path; `what` names the option in the TypeError. */
function checkPath(p, what) {
  if (typeof p !== 'string' || !path.posix.isAbsolute(p)) {
    throw new TypeError(`${what}: expected an absolute path, got ${JSON.stringify(p)}`);
  }
  if (/[\0\n\r]/.test(p))
    throw new TypeError(`${what}: a path may not contain NUL or a line break: ${JSON.stringify(p)}`);
  const normal = path.posix.normalize(p);
  return normal.length > 1 ? normal.replace(/\/+$/, '') : normal;
}

/** Both spellings of a path under `/var`, `/tmp` or `/etc`, symlinks to `/private/...` (reference section 4). */
function spellings(p) {
  const m = /^(\/private)?(\/(?:var|tmp|etc))(\/.*)?$/.exec(p);
  if (!m) return [p];
  const rest = m[2] + (m[3] ?? '');
  return [rest, `/private${rest}`];
}

/** Checked, both-spelled, deduplicated, sorted paths of one option. */
function pathSet(list, what) {
  if (!Array.isArray(list)) throw new TypeError(`${what}: expected an array of absolute paths`);
  return [...new Set(list.flatMap((p) => spellings(checkPath(p, what))))].sort();
}

/** `p` as an SBPL string literal: backslash and double quote escaped (TinyScheme string syntax). */
function quote(p) {
  return `"${p.replace(/[\\"]/g, '\\$&')}"`;
}

/** Every proper ancestor directory of `p` (without `/`). */
function ancestors(p) {
  const out = [];
  for (let dir = path.posix.dirname(p); dir !== '/'; dir = path.posix.dirname(dir)) out.push(dir);
  return out;
}

/**
 * One `(action ops filter...)` form, or '' when `filters` is empty: an SBPL rule with no filter
 * matches EVERYTHING, so an empty list must never become an unfiltered allow.
 */
function rule(action, ops, filters) {
  if (filters.length === 0) return '';
  return `(${action} ${ops}\n${filters.map((f) => `  ${f}`).join('\n')})`;
}

const subpaths = (paths) => paths.map((p) => `(subpath ${quote(p)})`);
const literals = (paths) => paths.map((p) => `(literal ${quote(p)})`);

/**
 * The SBPL profile of one Box command.
 *
 * @param {object} options
 * @param {string[]} options.writableDirs absolute, canonical host directories the Box may write
 *   (its own Box tree only; also readable). `/` is refused.
 * @param {string[]} [options.readableDirs] absolute directories readable even inside a hidden dir
 *   (the app's Node toolchain, e.g. `/Users/me/.nvm/versions/node/v22.1.0`).
 * @param {string[]} [options.hiddenDirs] absolute directories whose contents may not be read (the
 *   user's home); `readableDirs` and `writableDirs` inside them stay readable.
 * @param {boolean} options.networkDenied true: no socket may bind, connect or accept, Unix ones
 *   included; false: outbound, inbound and bind allowed, with DNS and TLS services.
 * @returns {string} the profile, deterministic for a given set of paths (sorted, deduplicated;
 *   paths under `/var`, `/tmp`, `/etc` appear in both spellings).
 * @throws {TypeError} a path that is not absolute, holds NUL, CR or LF, a list that is not an
 *   array, a writable `/`, or a `networkDenied` that is not a boolean.
 * Sources per rule: the comments in the profile and on the constants (CDX, SRT, reference doc).
 */
export function seatbeltProfile({ writableDirs, readableDirs = [], hiddenDirs = [], networkDenied }) {
  if (typeof networkDenied !== 'boolean') throw new TypeError('networkDenied: expected a boolean');
  const writable = pathSet(writableDirs, 'writableDirs');
  if (writable.includes('/')) throw new TypeError('writableDirs: the whole file system (/) may not be writable');
  const readable = pathSet(readableDirs, 'readableDirs');
  const hidden = pathSet(hiddenDirs, 'hiddenDirs');
  const systemDirs = pathSet(SYSTEM_READ_DIRS, 'system');
  const reopened = [...new Set([...readable, ...writable])].sort();
  // realpath(3) and Node's fs.realpath lstat every component, hidden ones included (SRT comment in
  // generateReadRules); granting metadata of the exact ancestors reveals no directory listing.
  const roots = [...systemDirs, ...reopened];
  const walked = [...new Set(roots.flatMap(ancestors))].filter((dir) => !roots.includes(dir)).sort();
  const net = !networkDenied;
  return (
    [
      '(version 1)',
      '; Closed by default; everything below is an exception (CDX base policy, SRT).',
      '(deny default)',
      '; Children inherit the profile; signals and process info only within this sandbox (CDX, SRT).',
      '(allow process-fork)',
      '(allow process-exec)',
      '(allow signal (target same-sandbox))',
      '; process-info* is outside (deny default) (mozilla gecko security/sandbox/mac/SandboxPolicyRDD.h).',
      '(deny process-info*)',
      '(allow process-info* (target same-sandbox))',
      '; host_processor_info for libuv/Node os.cpus(), host_statistics for os.freemem() (CDX base policy).',
      '(allow mach-host*)',
      rule(
        'allow',
        'mach-lookup',
        MACH_SERVICES.map((name) => `(global-name ${quote(name)})`),
      ),
      rule('allow', 'sysctl-read', [
        ...SYSCTL_NAMES.map((name) => `(sysctl-name ${quote(name)})`),
        ...SYSCTL_PREFIXES.map((prefix) => `(sysctl-name-prefix ${quote(prefix)})`),
      ]),
      '; Named POSIX semaphores (Python multiprocessing in Box commands; CDX base policy).',
      '(allow ipc-posix-sem)',
      "; openpty(): only ptys the Box opened itself (the sandbox pty extension); a Box command's stdio\n" +
        "; are pipes, so no terminal of the user is written or ioctl'd (security review).",
      '(allow pseudo-tty)',
      '(allow file-read* file-write-data file-ioctl (literal "/dev/ptmx"))',
      '(allow file-read* file-write-data (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))',
      '; Devices: data only, never file-write* (no create, unlink or rename in /dev) (SRT, CDX).',
      rule('allow', 'file-read* file-write-data file-ioctl', literals(DATA_DEVICES)),
      '(allow file-read* file-write-data (subpath "/dev/fd"))',
      '; Reads: the root listing, system directories and files (reference section 4).',
      '(allow file-read* (literal "/"))',
      rule('allow', 'file-read*', [...subpaths(systemDirs), ...literals(pathSet(SYSTEM_READ_FILES, 'system'))]),
      '; Hidden directories (the home); the re-allow after it wins: last matching rule (file header).',
      rule('deny', 'file-read*', subpaths(hidden)),
      rule('allow', 'file-read*', subpaths(reopened)),
      rule('allow', 'file-read-metadata', literals(walked)),
      '; Writes: only below the Box directories.',
      rule('allow', 'file-write*', subpaths(writable)),
      networkDenied
        ? '; No network rule: IP and Unix sockets cannot bind, connect or accept. Node start-up needs\n' +
          '; neither (libuv stdio pipes are unnamed socketpairs; CDX grants no socket rule offline).'
        : '; Network: outbound, inbound and bind, system sockets, DNS and TLS services (CDX network policy).',
      // IP only: an unfiltered network-outbound also connects Unix sockets (a local Docker daemon's).
      ...(net
        ? [
            '(allow network-outbound (remote ip "*:*"))',
            '(allow network-inbound (local ip "*:*"))',
            '(allow network-bind (local ip "*:*"))',
            '(allow system-socket)',
          ]
        : []),
      net
        ? rule(
            'allow',
            'mach-lookup',
            NETWORK_MACH_SERVICES.map((name) => `(global-name ${quote(name)})`),
          )
        : '',
      net ? '(allow sysctl-read (sysctl-name-prefix "net.routetable."))' : '',
      net ? rule('allow', 'file-read*', literals(pathSet(['/private/var/run/resolv.conf'], 'system'))) : '',
    ]
      .filter(Boolean)
      .join('\n') + '\n'
  );
}

/**
 * argv of one sandboxed command: `{ file: SANDBOX_EXEC, args: ['-p', profile, '--', file, ...args] }`.
 * `--` ends sandbox-exec's options (CDX `seatbelt.rs` always passes it; the sandbox-exec(1) synopsis,
 * `[-f file] [-n name] [-p string] [-D key=value ...] command [arguments ...]`, does not mention it).
 * `file` must be absolute: given a bare name, sandbox-exec would search the PATH of its own
 * environment (CDX hands it bare names such as `bash`), which the Box's env controls.
 * @param {string} profile an SBPL profile (seatbeltProfile)
 * @param {string} file absolute path of the program to run
 * @param {string[]} [args] its arguments
 * @returns {{ file: string, args: string[] }}
 * @throws {TypeError} an empty profile, a relative `file`, or non-string arguments.
 */
export function seatbeltArgs(profile, file, args = []) {
  if (typeof profile !== 'string' || profile.trim() === '')
    throw new TypeError('seatbeltArgs: expected an SBPL profile');
  checkPath(file, 'seatbeltArgs file');
  if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) {
    throw new TypeError('seatbeltArgs: args must be an array of strings');
  }
  return { file: SANDBOX_EXEC, args: ['-p', profile, '--', file, ...args] };
}

/**
 * The start-up probe: a trivial allow-all profile applied to `/usr/bin/true`. It fails with exit
 * 71 when the host itself already runs under Seatbelt, as applying any profile does there
 * (reference section 4: SRT#67, CDX#45657; the probe itself: btucker/midtown PR #1025).
 * @returns {{ file: string, args: string[] }} run it with execFile and pass the outcome to
 *   classifySeatbeltProbe.
 */
export function probeSeatbeltArgs() {
  return seatbeltArgs('(version 1)\n(allow default)\n', '/usr/bin/true');
}

/**
 * Reads the probe's outcome.
 * @param {{ exitCode: number | string | null, stderr?: string }} outcome `exitCode`: the exit
 *   status, or execFile's `error.code` ('ENOENT' when the binary is missing), null if killed.
 * @returns {{ works: boolean, reason?: string }} `reason` only when it does not work.
 * Source: reference section 4 (exit 71, `sandbox_apply: Operation not permitted`, no nesting).
 */
export function classifySeatbeltProbe({ exitCode, stderr = '' }) {
  if (exitCode === 0) return { works: true };
  if (exitCode === 'ENOENT') {
    return { works: false, reason: `${SANDBOX_EXEC} is missing: Seatbelt isolation needs macOS with sandbox-exec` };
  }
  if (exitCode === EX_NESTED || /sandbox_apply: Operation not permitted/.test(stderr)) {
    return {
      works: false,
      reason:
        "already inside a Seatbelt sandbox (nested sandbox-exec is refused by macOS): run vite outside the agent's sandbox or set isolation: 'none'",
    };
  }
  const detail = String(stderr).trim().split('\n')[0];
  const how = exitCode === null || exitCode === undefined ? 'was killed' : `failed (${exitCode})`;
  return { works: false, reason: `${SANDBOX_EXEC} ${how}${detail ? `: ${detail}` : ''}` };
}
