// A terminal (PTY) in a Box, for `POST …/interactive` (protocols/vercel-interactive.mjs).
//
// The pseudo-terminal is util-linux's `script -q -e -c <command> /dev/null`, started as an
// ordinary Box command, so it runs under the Box's sandbox, cgroup, rlimits and seccomp filter like
// any other command, and is killed with the Box. Under bubblewrap it allocates its terminal from
// the Box's own devpts (`--dev /dev`): `tty` in the Box names `/dev/pts/0`, and nothing of the
// host's terminals is reachable. No native code runs in the host (node-pty would need a compiled
// addon in the app, and would hand the Box a terminal of the host's devpts).
//
// `script` forwards its stdin to the terminal but has no way to be told a new window size. So the
// Box command is a small Node driver (PTY_DRIVER_SOURCE, run with `node -e`, Node being in every
// Box) that starts `script` and reads framed messages on its stdin: input bytes for the terminal,
// or a new size, which it sets with `stty -F <the terminal>` (coreutils; the kernel then sends
// SIGWINCH to the terminal's foreground programs). Its stdout is the terminal's output, raw.
// The driver runs with the Box's authority only: it reaches the terminal of its own command.
import fs from 'node:fs';
import path from 'node:path';

/** Default terminal size (columns, rows). */
export const DEFAULT_COLS = 80;
export const DEFAULT_ROWS = 24;
/** Largest columns or rows (the kernel's `winsize` holds 16 bits). */
export const MAX_SIZE = 65535;

/** Frame types on the driver's stdin: `[type u8][length u32 BE][body]`. */
const INPUT = 0;
const RESIZE = 1;

/**
 * The driver: `node -e <this> -- <cols> <rows> [command args…]`. Without a command it starts
 * `bash`, else `sh`, in the terminal. It exits with the command's exit code (`script -e`).
 */
export const PTY_DRIVER_SOURCE = `'use strict';
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const [cols, rows, ...cmd] = process.argv.slice(1);
const q = (s) => "'" + s.replace(/'/g, "'\\\\''") + "'";
const shell = process.env.SHELL;
const run = cmd.length > 0 ? 'exec ' + cmd.map(q).join(' ') : 'if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi';
const inner = (shell === undefined ? 'unset SHELL' : 'SHELL=' + q(shell)) + '; stty rows ' + Number(rows) + ' cols ' + Number(cols) + ' 2>/dev/null; ' + run;
const child = spawn('script', ['-q', '-e', '-c', inner, '/dev/null'], { stdio: ['pipe', 'inherit', 'inherit'], env: { ...process.env, SHELL: '/bin/sh' } });
child.stdin.on('error', () => {});
child.on('error', (err) => { process.stderr.write('the terminal could not start: ' + err.message + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => process.exit(code ?? 128));
function terminal() {
  try {
    const kids = fs.readFileSync('/proc/' + child.pid + '/task/' + child.pid + '/children', 'utf8').trim().split(/\\s+/);
    const tty = fs.readlinkSync('/proc/' + kids[0] + '/fd/0');
    return /^\\/dev\\/pts\\/[0-9]+$/.test(tty) ? tty : null;
  } catch { return null; }
}
let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 5) {
    const length = pending.readUInt32BE(1);
    if (pending.length < 5 + length) break;
    const type = pending[0];
    const body = pending.subarray(5, 5 + length);
    pending = pending.subarray(5 + length);
    if (type === ${INPUT}) child.stdin.write(body);
    else if (type === ${RESIZE} && body.length === 4) {
      const tty = terminal();
      if (tty) execFile('stty', ['-F', tty, 'rows', String(body.readUInt16BE(2)), 'cols', String(body.readUInt16BE(0))], () => {});
    }
  }
});
process.stdin.on('end', () => child.stdin.end());
`;

function frame(type, body) {
  const head = Buffer.alloc(5);
  head[0] = type;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** The driver frame carrying `bytes` (a Buffer) of terminal input. */
export function inputFrame(bytes) {
  return frame(INPUT, bytes);
}

/** The driver frame setting the terminal to `cols` × `rows` (integers 1–MAX_SIZE). */
export function resizeFrame(cols, rows) {
  const body = Buffer.alloc(4);
  body.writeUInt16BE(cols, 0);
  body.writeUInt16BE(rows, 2);
  return frame(RESIZE, body);
}

/** Whether `value` is a terminal size (columns or rows): an integer 1–MAX_SIZE. */
export function validSize(value) {
  return Number.isInteger(value) && value >= 1 && value <= MAX_SIZE;
}

/** Whether an executable `name` is on `PATH` (the host's: bubblewrap Boxes see its system directories). */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (dir === '') continue;
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/**
 * Why a Box of `isolation` cannot have a terminal on this machine (a sentence), or null. Seatbelt
 * (macOS) has BSD `script`, whose options and exit status differ and which this host has not been
 * tried with; Linux needs util-linux `script` and coreutils `stty`.
 */
export function ptyUnavailable(isolation) {
  if (isolation === 'seatbelt' || process.platform === 'darwin') {
    return 'interactive terminals on the local Box host need Linux (util-linux `script`); Boxes of this host run under Seatbelt (macOS)';
  }
  for (const tool of ['script', 'stty']) {
    if (!onPath(tool)) {
      return `interactive terminals on the local Box host need \`${tool}\` (install util-linux and coreutils, e.g. \`apt-get install util-linux coreutils\`)`;
    }
  }
  return null;
}

/**
 * Starts the terminal command in `box` (engine/box.mjs): `command`/`args` (none: a shell), `cols` ×
 * `rows`, `env` (added to the Box's), `cwd` (a Box path; default its work directory). Resolves to
 * the running BoxCommand, whose stdin takes inputFrame/resizeFrame frames and whose stdout is the
 * terminal's output; throws what a Box command's start throws (a BoxRequestError).
 */
export async function startPty(box, { command, args = [], cols, rows, env, cwd }) {
  const argv = command === undefined ? [] : [command, ...args];
  return box.startCommand({
    command: 'node',
    args: ['-e', PTY_DRIVER_SOURCE, '--', String(cols), String(rows), ...argv],
    cwd,
    env: { TERM: 'xterm-256color', ...env },
    attachStdin: true,
  });
}
