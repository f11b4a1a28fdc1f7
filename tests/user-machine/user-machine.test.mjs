// The local provider on the machines users have (issue 22), run by scripts/test-user-lane.sh: as
// an unprivileged user, with Node from a private nvm-shaped prefix, the system node/npm/npx/
// corepack hidden, and in the `no-tools` setting also bwrap, prlimit, slirp4netns, unshare and
// nsenter hidden. The setting comes from VHS_LANE.
//
// Every Run goes through the in-process Box host the package starts itself (no `local.baseUrl`),
// as in an app. A probe Definition reports, from inside its Box, its uid, its user/pid/net
// namespaces (compared with this process's own), whether it can list the user's home, its network
// interfaces and whether it reaches a TCP server this test serves on the host's 127.0.0.1; each
// report is checked against the executionAuthority the runner (and a Session) claims, so a claim
// the Box does not back fails here.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  closeLocalBoxHost,
  configureSandbox,
  openSandboxSession,
  resolveSandboxRunner,
  runSandbox,
} from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';

const NODE_TOOLS = ['node', 'npm', 'npx', 'corepack'];
const BOX_TOOLS = ['bwrap', 'prlimit', 'slirp4netns', 'unshare', 'nsenter'];
/** The system directories of the user's PATH (the lane puts the private prefix before them). */
const SYSTEM_PATH = ['/usr/local/bin', '/usr/bin', '/bin'];

/**
 * What each setting hides and what the local provider must do there. `runs`: the network
 * policies (undefined: unset) whose Run must answer 200, with the executionAuthority a user's
 * machine should get (the same a root host gets: bubblewrap with a slirp4netns Box network when
 * the tools are there, no isolation otherwise). `refused`: policies the host cannot honour, which
 * must be refused rather than run without the isolation asked for.
 */
const SETTINGS = {
  'private-node': {
    hidden: NODE_TOOLS,
    present: BOX_TOOLS,
    runs: [
      [undefined, { isolation: 'process', network: 'restricted', scope: 'sandbox' }],
      ['allow-all', { isolation: 'process', network: 'restricted', scope: 'sandbox' }],
      ['deny-all', { isolation: 'process', network: 'none', scope: 'sandbox' }],
    ],
    refused: [],
  },
  'no-tools': {
    hidden: [...NODE_TOOLS, ...BOX_TOOLS],
    present: [],
    runs: [
      [undefined, { isolation: 'none', network: 'unrestricted', scope: 'host' }],
      ['allow-all', { isolation: 'none', network: 'unrestricted', scope: 'host' }],
    ],
    refused: [['deny-all', /\bbwrap\b/]],
  },
};

const settingName = process.env.VHS_LANE;
const setting = SETTINGS[settingName];

if (settingName === undefined) {
  // Run outside the lane (e.g. `node --test tests/`): as root with the system Node none of these
  // checks means anything, so the file reports one skipped test instead of passing vacuously.
  test('the user-machine lane', { skip: 'runs only under scripts/test-user-lane.sh (VHS_LANE is unset)' }, () => {});
} else {
  assert.ok(setting, `VHS_LANE=${settingName} is no setting of this lane (${Object.keys(SETTINGS).join(', ')})`);
  laneTests(settingName, setting);
}

/** The probe's source: a Definition entry, and (with a caller) a Session command. */
const PROBE = String.raw`
import fs from 'node:fs';
import net from 'node:net';

/** Connects to host:port and reads one line: { reached, greeting?, error? } (3 s at most). */
function reach(host, port, nonce) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let data = '';
    const done = (result) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ reached: false, error: 'timeout' }), 3000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      data += chunk;
      if (data.includes('\n')) done({ reached: data.trim() === nonce, greeting: data.trim() });
    });
    socket.on('error', (error) => done({ reached: false, error: error.code ?? error.message }));
  });
}

export default async function probe({ home, port, nonce, touch }) {
  if (touch) {
    try {
      fs.writeFileSync(touch, 'the probe ran');
    } catch {
      // under isolation the home is not there: the host cannot see this Run anyway
    }
  }
  const ns = (kind) => {
    try {
      return fs.readlinkSync('/proc/self/ns/' + kind);
    } catch (error) {
      return 'unreadable: ' + error.code;
    }
  };
  let homeListing;
  try {
    homeListing = { entries: fs.readdirSync(home) };
  } catch (error) {
    homeListing = { error: error.code };
  }
  const interfaces = fs.readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2).filter(Boolean).map((line) => line.trim().split(':')[0]);
  return {
    uid: process.getuid(),
    execPath: process.execPath,
    ns: { user: ns('user'), pid: ns('pid'), net: ns('net') },
    home: homeListing,
    interfaces,
    loopback: await reach('127.0.0.1', port, nonce),
    // slirp4netns's gateway is the host's loopback unless --disable-host-loopback: try it too.
    gateway: interfaces.includes('tap0') ? await reach('10.0.2.2', port, nonce) : null,
  };
}
`;

/** The executionAuthority dimensions a setting expects, from the full object. */
function expectedShape(authority) {
  return { isolation: authority.isolation, network: authority.network, scope: authority.filesystem.scope };
}

/**
 * Checks a probe report (what the Box could do) against the executionAuthority claimed for that
 * Box. Every claimed value has its assertions; a value this lane cannot check fails.
 */
function assertBoxMatches(authority, probe, host) {
  const where = `executionAuthority ${JSON.stringify(authority)}, the Box reported ${JSON.stringify(probe)}`;
  const ownUserNs = probe.ns.user !== host.ns.user;
  const ownPidNs = probe.ns.pid !== host.ns.pid;
  const ownNetNs = probe.ns.net !== host.ns.net;
  const seesHome = Array.isArray(probe.home.entries) && probe.home.entries.includes(host.marker);

  switch (authority.isolation) {
    case 'process':
      assert.ok(ownUserNs, `isolation 'process' but the Box is in the host's user namespace: ${where}`);
      assert.ok(ownPidNs, `isolation 'process' but the Box is in the host's pid namespace: ${where}`);
      assert.notEqual(probe.uid, 0, `isolation 'process' but the Box runs as uid 0: ${where}`);
      break;
    case 'none':
      assert.ok(!ownUserNs, `isolation 'none' but the Box has a user namespace of its own: ${where}`);
      assert.equal(probe.uid, host.uid, `isolation 'none': the Box runs as the host user: ${where}`);
      // A pid namespace of its own is allowed under 'none' (the README: the host gives each
      // command one where it can, so its daemons end with it): no claim to check.
      break;
    default:
      assert.fail(`isolation '${authority.isolation}' is not what a local Box host reports: ${where}`);
  }

  switch (authority.filesystem.scope) {
    case 'sandbox':
      assert.ok(!seesHome, `filesystem.scope 'sandbox' but the Box lists the user's home: ${where}`);
      break;
    case 'host':
      assert.ok(seesHome, `filesystem.scope 'host' but the Box cannot list the user's home: ${where}`);
      break;
    default:
      assert.fail(`filesystem.scope '${authority.filesystem.scope}' is not what a local Box host reports: ${where}`);
  }

  const nonLoopback = probe.interfaces.filter((name) => name !== 'lo');
  switch (authority.network) {
    case 'none':
      assert.ok(ownNetNs, `network 'none' but the Box is in the host's network namespace: ${where}`);
      assert.deepEqual(nonLoopback, [], `network 'none' but the Box has interfaces besides lo: ${where}`);
      assert.equal(probe.loopback.reached, false, `network 'none' but the Box reached the host's 127.0.0.1: ${where}`);
      break;
    case 'restricted':
      assert.ok(ownNetNs, `network 'restricted' but the Box is in the host's network namespace: ${where}`);
      assert.ok(nonLoopback.length > 0, `network 'restricted' but the Box has no outbound interface: ${where}`);
      assert.equal(
        probe.loopback.reached,
        false,
        `network 'restricted' but the Box reached the host's 127.0.0.1: ${where}`,
      );
      assert.notEqual(
        probe.gateway?.reached,
        true,
        `network 'restricted' but the Box reached the host's loopback through the gateway 10.0.2.2: ${where}`,
      );
      break;
    case 'unrestricted':
      assert.equal(
        probe.loopback.reached,
        true,
        `network 'unrestricted' but the Box did not reach the host's 127.0.0.1: ${where}`,
      );
      break;
    default:
      assert.fail(`network '${authority.network}' is not what a local Box host reports: ${where}`);
  }
}

/** `configureSandbox` for the in-process host with `networkPolicy` (undefined: left unset). */
function useInProcessHost(networkPolicy) {
  configureSandbox({ provider: 'local', local: networkPolicy === undefined ? {} : { networkPolicy } });
}

/** The Response's body as JSON, with the status and body in the message when it is not 200. */
async function okJson(response) {
  const body = await response.text();
  assert.equal(response.status, 200, `runSandbox answered ${response.status}: ${body}`);
  return JSON.parse(body);
}

function laneTests(name, { hidden, present, runs, refused }) {
  const home = os.homedir();
  const host = {
    uid: process.getuid(),
    marker: `vhs-lane-marker-${randomUUID()}`,
    ns: Object.fromEntries(['user', 'pid', 'net'].map((kind) => [kind, fs.readlinkSync(`/proc/self/ns/${kind}`)])),
  };
  let server;
  let payload;

  before(async () => {
    // The probe's targets: a marker in the user's home and a loopback server that greets with a nonce.
    fs.writeFileSync(path.join(home, host.marker), 'visible only without isolation');
    const nonce = randomUUID();
    server = net.createServer((socket) => socket.end(`${nonce}\n`));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    payload = { home, port: server.address().port, nonce };
    defineTestSandbox('lane/probe', PROBE);
  });

  after(async () => {
    await closeLocalBoxHost();
    server?.close();
    fs.rmSync(path.join(home, host.marker), { force: true });
  });

  describe(`setting ${name}: the machine is the one the lane claims`, () => {
    test('an unprivileged user with Node from a private prefix', () => {
      assert.notEqual(process.getuid(), 0, 'not root');
      assert.notEqual(process.getgid(), 0, 'not group root');
      const prefix = process.env.VHS_LANE_NODE_PREFIX;
      assert.ok(prefix && !prefix.startsWith('/usr/'), `a private prefix (VHS_LANE_NODE_PREFIX=${prefix})`);
      assert.equal(process.execPath, path.join(prefix, 'bin', 'node'), 'this test runs on the private node');
      assert.equal(process.versions.node.split('.')[0], '22', 'the private node is Node 22');
      assert.equal(
        fs.readlinkSync(path.join(prefix, 'bin', 'npm')),
        '../lib/node_modules/npm/bin/npm-cli.js',
        'nvm-shaped npm',
      );
      assert.equal(process.env.PATH.split(':')[0], path.join(prefix, 'bin'), 'the private prefix is first on PATH');
      assert.equal(home, os.userInfo().homedir, "HOME is the user's home");
      assert.equal(fs.statSync(home).uid, process.getuid(), "the home is the user's own");
    });

    test(`hidden from every system PATH directory: ${hidden.join(', ')}`, () => {
      const visible = hidden
        .flatMap((tool) => SYSTEM_PATH.map((dir) => path.join(dir, tool)))
        .filter((file) => fs.existsSync(file));
      assert.deepEqual(visible, [], 'the whiteouts hide them');
    });

    const presentSkip = present.length === 0 && 'this setting hides every Box tool (checked by the test above)';
    test(`present (the Box host's tools, as a user who installed them has them): ${present.join(', ') || 'none'}`, {
      skip: presentSkip,
    }, () => {
      const missing = present.filter((tool) => !SYSTEM_PATH.some((dir) => fs.existsSync(path.join(dir, tool))));
      assert.deepEqual(missing, [], 'this setting needs them');
    });
  });

  for (const [networkPolicy, expected] of runs) {
    const label = networkPolicy ?? 'unset';
    describe(`setting ${name}, networkPolicy ${label}`, () => {
      test(`resolveSandboxRunner reports ${JSON.stringify(expected)}`, { timeout: 60_000 }, async () => {
        useInProcessHost(networkPolicy);
        const runner = await resolveSandboxRunner('lane/probe');
        assert.equal(runner.provider, 'local');
        assert.deepEqual(
          expectedShape(runner.executionAuthority),
          expected,
          `executionAuthority ${JSON.stringify(runner.executionAuthority)}`,
        );
      });

      test("runSandbox answers 200 and the Box is what the runner's executionAuthority says", {
        timeout: 120_000,
      }, async () => {
        useInProcessHost(networkPolicy);
        const runner = await resolveSandboxRunner('lane/probe');
        const probe = await okJson(await runSandbox('lane/probe', payload));
        assert.equal(probe.execPath, process.execPath, "the Box runs the app's own Node, from its private prefix");
        assertBoxMatches(runner.executionAuthority, probe, host);
      });

      test("a Session carries the runner's executionAuthority and its commands' Box matches it", {
        timeout: 120_000,
      }, async () => {
        useInProcessHost(networkPolicy);
        const runner = await resolveSandboxRunner('lane/probe');
        const session = await openSandboxSession();
        try {
          assert.deepEqual(
            session.executionAuthority,
            runner.executionAuthority,
            'the Session got what the runner said',
          );
          await session.write('probe.mjs', PROBE);
          await session.write(
            'main.mjs',
            "import probe from './probe.mjs';\nconsole.log(JSON.stringify(await probe(JSON.parse(process.argv[2]))));\n",
          );
          // `node` as a Session command, as the agent tool runs it: the Box must find a node.
          const result = await session.exec('node', ['main.mjs', JSON.stringify(payload)]);
          assert.equal(result.exitCode, 0, `node in the Session exited ${result.exitCode}: ${result.stderr}`);
          assertBoxMatches(session.executionAuthority, JSON.parse(result.stdout), host);
        } finally {
          await session.close();
        }
      });
    });
  }

  if (name === 'no-tools') {
    describe('setting no-tools in production (NODE_ENV=production)', () => {
      /** One Run in a fresh process of this Node with NODE_ENV=production: `{ status, body }`. */
      const runInProduction = (local) =>
        new Promise((resolve, reject) => {
          const script = `
            import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
            configureSandbox({ provider: 'local', local: ${JSON.stringify(local)} });
            registerSandbox('prod', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default () => "ran"' }] });
            const response = await runSandbox('prod');
            console.log(JSON.stringify({ status: response.status, body: await response.text() }));`;
          execFile(
            process.execPath,
            ['--input-type=module', '-e', script],
            { env: { ...process.env, NODE_ENV: 'production' }, cwd: process.cwd(), timeout: 60_000 },
            (error, stdout, stderr) => {
              if (error) reject(new Error(`${error.message}\n${stderr}`));
              else resolve(JSON.parse(stdout.trim().split('\n').pop()));
            },
          );
        });

      test('the local provider never degrades silently: without isolation the Run is SANDBOX_PROVIDER_UNAVAILABLE naming what is missing', {
        timeout: 90_000,
      }, async () => {
        const { status, body } = await runInProduction({});
        assert.equal(status, 503, body);
        const { error } = JSON.parse(body);
        assert.equal(error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
        assert.match(error.message, /refuses to run Boxes without isolation in production.*bwrap.*isolation: 'none'/);
      });

      test("local.isolation 'none' accepts plain processes explicitly", { timeout: 90_000 }, async () => {
        assert.deepEqual(await runInProduction({ isolation: 'none' }), { status: 200, body: '"ran"' });
      });
    });
  }

  for (const [networkPolicy, missing] of refused) {
    describe(`setting ${name}, networkPolicy ${networkPolicy}`, () => {
      test(`runSandbox is refused with SANDBOX_PROVIDER_UNAVAILABLE naming ${missing}, and nothing runs`, {
        timeout: 60_000,
      }, async () => {
        useInProcessHost(networkPolicy);
        const touched = path.join(home, `vhs-lane-ran-${randomUUID()}`);
        const response = await runSandbox('lane/probe', { ...payload, touch: touched });
        const body = await response.text();
        try {
          assert.equal(response.status, 503, `runSandbox answered ${response.status}: ${body}`);
          const { error } = JSON.parse(body);
          assert.equal(error.code, 'SANDBOX_PROVIDER_UNAVAILABLE', body);
          assert.match(error.message, missing, 'the message names what is missing');
          assert.equal(
            fs.existsSync(touched),
            false,
            'the Definition did not run (it would have written this file in the home)',
          );
        } finally {
          fs.rmSync(touched, { force: true });
        }
      });

      test(`openSandboxSession is refused with SANDBOX_PROVIDER_UNAVAILABLE naming ${missing}`, {
        timeout: 60_000,
      }, async () => {
        useInProcessHost(networkPolicy);
        // A Session that opens anyway is closed at once (left open it would hold the Box, and this
        // test file's process, for the Box lifetime) and fails the test with what it claimed.
        const outcome = await openSandboxSession().then(
          async (session) => {
            await session.close();
            return { opened: session.executionAuthority };
          },
          (error) => ({ error }),
        );
        assert.ok(
          outcome.error,
          `a Session opened instead of being refused, claiming ${JSON.stringify(outcome.opened)}`,
        );
        assert.equal(outcome.error.name, 'SandboxError', String(outcome.error));
        assert.equal(outcome.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE', outcome.error.message);
        assert.match(outcome.error.message, missing, 'the message names what is missing');
      });
    });
  }
}
