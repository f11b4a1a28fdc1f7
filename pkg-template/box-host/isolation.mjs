// Isolation of Box processes: bubblewrap when present (or required), plain processes otherwise.
// Builds the spawn spec (file, argv, host cwd, env) for one command and describes the isolation
// actually in use as an `executionAuthority` object.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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

function run(file, args) {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: BOX_PATH }, timeout: 10_000 }, (err) => resolve(!err));
  });
}

/** True when `bwrap` runs and can build a sandbox here (version check plus one probe run). */
export async function bubblewrapWorks() {
  if (!(await run('bwrap', ['--version']))) return false;
  return run('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true']);
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

/** What a Box's commands may do, honestly: `network` is 'none' only when it is really cut off. */
export function executionAuthority(isolation, networkDenied = false) {
  const sandboxed = isolation === 'bubblewrap';
  return {
    isolation: sandboxed ? 'process' : 'none',
    network: sandboxed && networkDenied ? 'none' : 'unrestricted',
    filesystem: { access: 'read-write', scope: sandboxed ? 'sandbox' : 'host' },
    environment: 'selected',
    credentials: 'none',
    processes: 'arbitrary',
  };
}

/** Bubblewrap argv (without the command) for a Box at host dir `root`. */
function bubblewrapArgs({ root, workDir, networkDenied, env, cwd }) {
  const args = ['--unshare-all'];
  if (!networkDenied) args.push('--share-net');
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
  args.push('--proc', '/proc', '--dev', '/dev');
  for (const dir of writableDirs(workDir)) args.push('--bind', path.join(root, dir), dir);
  args.push('--remount-ro', '/', '--clearenv');
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
  args.push('--chdir', cwd, '--');
  return args;
}

/**
 * Spawn spec for one Box command: `{ file, args, cwd (host), env }`. `cwd` is a Box path of an
 * existing directory, `cwdHost` its checked host path; `env` holds only the selected variables;
 * `workDir` is the Box's work directory (`/vercel/sandbox` or `/workspace`), bound read-write.
 */
export function spawnSpec({ isolation, root, workDir, networkDenied, command, args, cwd, cwdHost, env }) {
  if (isolation === 'bubblewrap') {
    const fullEnv = { PATH: BOX_PATH, HOME: BOX_HOME, ...env };
    return {
      file: 'bwrap',
      args: [...bubblewrapArgs({ root, workDir, networkDenied, env: fullEnv, cwd }), command, ...args],
      cwd: root,
      env: { PATH: BOX_PATH },
    };
  }
  return {
    file: command,
    args,
    cwd: cwdHost,
    env: { PATH: BOX_PATH, HOME: path.join(root, BOX_HOME), ...env },
  };
}

/** Whether a Box path can be a command cwd under this isolation (bubblewrap only shows some dirs). */
export function cwdVisible(isolation, boxCwd, workDir) {
  if (isolation !== 'bubblewrap') return true;
  return writableDirs(workDir).some((dir) => boxCwd === dir || boxCwd.startsWith(`${dir}/`));
}
