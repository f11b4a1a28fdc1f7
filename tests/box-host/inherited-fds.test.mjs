// Nothing of the host's process reaches a Box through a file descriptor (issue 32, item 1). The
// app's parent can leak fds without close-on-exec into it (a shell's `exec 200<dir`, a CI
// runner's pipes, systemd sockets); libuv's spawn and bubblewrap close nothing above the stdio
// they set up, and a directory fd walks out of the Box (`/proc/self/fd/N/..`). Here a Box host
// runs in a child process started holding a directory, a FIFO and a socket at fds 200–202: a
// Session's command, a spare's parked Node (a Run) and an install must see none of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NO_BWRAP, SLUGIFY_LOCK } from '../support/local-host.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

// The host's process: reports what its own fds 200–202 are, then what a Box command, a Run (a
// spare's parked Node: its harness reads /proc/self/fd) and a Definition's install see.
const HOST_SCRIPT = `
import fs from 'node:fs';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, registerSandbox, runSandbox, closeLocalBoxHost } from '@vite-hub/sandbox';
const isolation = process.env.FD_TEST_ISOLATION;
const leaked = Object.fromEntries([200, 201, 202].map((fd) => [fd, fs.readlinkSync('/proc/self/fd/' + fd)]));
const host = await startBoxHost({ isolation });
const api = async (route, body) => (await fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
const sid = JSON.parse(await api('/v3/sandboxes', { projectId: 'p', ports: [] })).session.id;
const lines = (await api('/v2/sandboxes/sessions/' + sid + '/cmd', { command: 'sh', args: ['-c', 'for f in /proc/self/fd/*; do echo "$f -> $(readlink $f)"; done; ls /proc/self/fd/200/.. 2>&1 | head -2'], wait: true })).trim().split('\\n').map((l) => JSON.parse(l));
const command = lines.filter((l) => l.stream === 'stdout').map((l) => l.data).join('');
await api('/v2/sandboxes/sessions/' + sid + '/stop', {});
const probe = 'import fs from "node:fs"; export default () => fs.readdirSync("/proc/self/fd").map((fd) => { try { return fd + " -> " + fs.readlinkSync("/proc/self/fd/" + fd); } catch { return fd; } });';
const files = (extra = {}) => [
  { path: 'package.json', content: JSON.stringify({ name: 'fds', private: true, type: 'module', ...extra }) },
  { path: 'index.mjs', content: probe },
];
registerSandbox('fds', { files: files() });
// An install (one dependency) whose postinstall writes what its process holds into the Box,
// read by the entry.
registerSandbox('fds-install', { files: [
  { path: 'package.json', content: JSON.stringify({ name: 'fds-install', private: true, type: 'module', dependencies: { slugify: '1.6.9' }, scripts: { postinstall: 'ls -l /proc/self/fd > node_modules/installed-fds.txt' } }) },
  { path: 'package-lock.json', content: process.env.FD_TEST_LOCK },
  { path: 'index.mjs', content: 'import fs from "node:fs"; export default () => fs.readFileSync("node_modules/installed-fds.txt", "utf8");' },
] });
configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
const run = await (await runSandbox('fds')).json();
const install = await (await runSandbox('fds-install')).json();
await closeLocalBoxHost();
await host.close();
process.stdout.write(JSON.stringify({ leaked, command, run, install }));
`;

/** Runs HOST_SCRIPT under `isolation` with a directory, a FIFO and a socket at fds 200, 201, 202. */
async function hostWithLeakedFds(isolation) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'leaked-fds-'));
  const dir = path.join(scratch, 'private-dir');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'host-secret.txt'), 'secret');
  const fifo = path.join(scratch, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const dirFd = fs.openSync(dir, 'r');
  // Read-write: opening a FIFO so does not wait for a writer.
  const fifoFd = fs.openSync(fifo, 'r+');
  // High numbers, as a shell's `exec 200<dir` makes them: Node marks a few low inherited fds
  // close-on-exec itself when it starts, not these.
  const stdio = ['ignore', 'pipe', 'pipe', ...Array(197).fill('ignore'), dirFd, fifoFd, 'pipe'];
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOST_SCRIPT], {
    cwd: repo,
    stdio,
    env: { ...process.env, FD_TEST_ISOLATION: isolation, FD_TEST_LOCK: JSON.stringify(SLUGIFY_LOCK) },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  fs.closeSync(dirFd);
  fs.closeSync(fifoFd);
  fs.rmSync(scratch, { recursive: true, force: true });
  assert.equal(code, 0, err);
  return JSON.parse(out);
}

/** The leaked fds' targets (the directory, the FIFO, the socket) found in `seen` (fd listings). */
function leakedIn(leaked, seen) {
  return Object.values(leaked).filter((target) => seen.includes(target));
}

test('under bubblewrap a Box command, a Run and an install hold none of the fds the host inherited', {
  skip: NO_BWRAP,
  timeout: 120_000,
}, async () => {
  const { leaked, command, run, install } = await hostWithLeakedFds('bubblewrap');
  assert.match(leaked[200], /private-dir$/);
  assert.match(leaked[201], /fifo$/);
  assert.match(leaked[202], /^socket:/);
  assert.deepEqual(leakedIn(leaked, command), [], command);
  assert.deepEqual(leakedIn(leaked, run.join('\n')), [], run.join('\n'));
  assert.deepEqual(leakedIn(leaked, install), [], install);
  assert.doesNotMatch(command, /host-secret/);
  // The command's shell holds its stdio and nothing else: above 2 only the directory its glob
  // reads, which its `readlink` subshell no longer has (an empty target).
  const beyondStdio = [...command.matchAll(/^\/proc\/self\/fd\/(\d+) -> (.*)$/gm)].filter((m) => Number(m[1]) > 2);
  assert.deepEqual(
    beyondStdio.map((m) => m[2]),
    [''],
    command,
  );
});

test('without isolation no Box process holds what the host inherited either', { timeout: 120_000 }, async () => {
  const { leaked, command, run, install } = await hostWithLeakedFds('none');
  assert.deepEqual(leakedIn(leaked, command), [], command);
  assert.deepEqual(leakedIn(leaked, run.join('\n')), [], run.join('\n'));
  assert.deepEqual(leakedIn(leaked, install), [], install);
});
