// A parked Node process: `node` started ahead in a spare Box (parked-boxes.mjs), under the same
// sandbox, limits and environment as any command of that Box, waiting for the one command it will
// become. Starting Node is most of a warm Run's time (about 45 ms of 107 ms on a 2-core Xeon,
// issue 25); a parked process has paid it before the Run asks.
//
// It becomes only a Run's harness command (`node <…>/.vite-hub/harness.mjs <input>`, with the
// Box's environment unchanged): the harness is an ES module that reads its argv and cwd when it
// starts, so importing it in a process that first moves to the command's cwd and sets that argv
// runs it as `node` would. Any other command (an install, a session's line, a user script, which
// may test `require.main` or read `process.execArgv`) starts its own process as before, and the
// parked one is ended. The handover carries no secret: the Run's nonce stays in its input file.
// The process serves one command and exits with it, so isolation between Runs is unchanged.

/** Where a bubblewrap Box sees the parked script (read-only, its content through an fd). */
export const PARKED_NODE_PATH = '/opt/vite-hub-sandbox/parked-node.mjs';
/**
 * Where a parked process sees the harness it imports before its handover (read-only, through an
 * fd), when the host was given the runtime's harness source (startBoxHost `harness`).
 */
export const PARKED_HARNESS_PATH = '/opt/vite-hub-sandbox/harness.mjs';
/**
 * The global a preloaded harness hands its `main` to, instead of running it (harness.mjs, end):
 * set by the parked script only while it imports the harness, before any other code runs.
 */
const PARKED_HOOK = "Symbol.for('vite-hub-sandbox:parked-harness')";

/**
 * The argv of a parked process: the script, and room (blanks). Node keeps a `process.title` only
 * as long as the command line it started with: without the room, an entry's title would be cut
 * shorter than in a process started for the harness command.
 */
export const PARKED_NODE_ARGS = [PARKED_NODE_PATH, ' '.repeat(512)];

/**
 * The parked script. When PARKED_HARNESS_PATH is shown, it first imports that harness, which
 * hands over its `main` instead of running it (its built-ins loaded, its primordials captured,
 * before anything of a Run exists). It then blocks on a synchronous read of stdin until the
 * host writes one JSON line `{ "cwd": <Box path>, "argv": [<script>, …args] }` and closes stdin,
 * then puts /dev/null in place of its stdin, moves to `cwd` (and says so in PWD, as bubblewrap
 * does for a command), sets `process.argv` to `[node, <script's absolute path>, …args]` and
 * imports the script, or, when the script's text is that of the preloaded harness, runs the
 * preloaded harness's `main` (a harness staged otherwise, or any other text, is imported as
 * `node` would). Its `process.title` stays `node`, as in a process started for the command;
 * `ps` shows the parked command line. End of input without a line (the host retired the spare)
 * exits 0.
 */
export const PARKED_NODE_SOURCE = `const fs = process.getBuiltinModule?.('node:fs') ?? (await import('node:fs')).default;
const path = process.getBuiltinModule?.('node:path') ?? (await import('node:path')).default;
const url = process.getBuiltinModule?.('node:url') ?? await import('node:url');
let preloaded = null;
const harnessText = fs.existsSync('${PARKED_HARNESS_PATH}') ? fs.readFileSync('${PARKED_HARNESS_PATH}', 'utf8') : null;
if (harnessText !== null) {
  globalThis[${PARKED_HOOK}] = (main) => {
    preloaded = main;
  };
  try {
    await import('${PARKED_HARNESS_PATH}');
  } finally {
    delete globalThis[${PARKED_HOOK}];
  }
}
const chunks = [];
const chunk = Buffer.alloc(65536);
for (;;) {
  let read;
  try {
    read = fs.readSync(0, chunk);
  } catch (error) {
    if (error.code === 'EAGAIN' || error.code === 'EINTR') continue;
    throw error;
  }
  if (read === 0) process.exit(0);
  chunks.push(Buffer.from(chunk.subarray(0, read)));
  if (chunk.subarray(0, read).includes(10)) break;
}
const { cwd, argv } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
// stdin becomes /dev/null (read-only), as a command's is: the handover socket would fail a read
// of /dev/stdin (ENXIO) and reach the children that inherit it. open() takes the lowest free fd.
fs.closeSync(0);
fs.openSync('/dev/null', 'r');
process.chdir(cwd);
// bubblewrap sets PWD to the directory it started the command in.
if (process.env.PWD !== undefined) process.env.PWD = cwd;
const script = path.resolve(argv[0]);
process.argv = [process.argv[0], script, ...argv.slice(1)];
// The staged harness, byte for byte the preloaded one: run it; anything else is imported.
let same = false;
try {
  same = preloaded !== null && fs.readFileSync(script, 'utf8') === harnessText;
} catch {}
if (same) await preloaded();
else await import(url.pathToFileURL(script).href);
`;

/** The file name a Run's harness has, in its `.vite-hub` directory (crates/core/src/harness.rs `HARNESS_FILE`). */
const HARNESS_FILE = /(^|\/)\.vite-hub\/harness\.mjs$/;

/**
 * Whether a parked process started with environment `parkedEnv` may become the command
 * `command args` whose environment is `env` (the Box's merged with the command's own): a Run's
 * harness, nothing else, with exactly the parked environment (what Node reads when it starts,
 * NODE_OPTIONS included, must be what it started with).
 */
export function parkedNodeFits(parkedEnv, { command, args, env }) {
  if (command !== 'node' || args.length < 1 || !HARNESS_FILE.test(args[0]) || args.some((arg) => arg.startsWith('-')))
    return false;
  const keys = Object.keys(env);
  return keys.length === Object.keys(parkedEnv).length && keys.every((key) => parkedEnv[key] === env[key]);
}

/** The line a parked process reads: the command's cwd (as the process sees it) and argv. */
export function handOverLine(cwd, args) {
  return `${JSON.stringify({ cwd, argv: args })}\n`;
}
