// A Box needs Node (issue 32, item 7): an app on Bun or Deno has no Node binary of its own
// (`process.execPath` is bun or deno), so Box commands ran whatever `node` the system had, or
// failed with exit 127 blamed on the handler; as root the probe took the deno binary for the
// app's Node (503). The probe's decision, with a faked `process.versions`: the first `node` on the
// app's PATH, or a Node named as missing (SANDBOX_PROVIDER_UNAVAILABLE for every Box command that
// needs it, before anything starts). Bun and Deno themselves are not run here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  foreignRuntime,
  missingToolMessage,
  resolveToolchain,
} from '../../pkg-template/box-host/engine/box-toolchain.mjs';
import { hostGaps } from '../../pkg-template/box-host/engine/host-probe.mjs';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-foreign-runtime-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** An executable shell script at `dir/name` printing `output`. */
function script(dir, name, output) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\necho ${output}\n`, { mode: 0o755 });
  return file;
}

const deno = script(path.join(scratch, 'deno/bin'), 'deno', 'deno 2.9.6');
const bun = script(path.join(scratch, 'bun/bin'), 'bun', '1.2.0');

test("the app's runtime: Bun and Deno are named, Node is none of them", () => {
  assert.equal(foreignRuntime({ node: '22.9.0', deno: '2.9.6', v8: '13' }), 'Deno 2.9.6');
  assert.equal(foreignRuntime({ node: '24.3.0', bun: '1.2.0' }), 'Bun 1.2.0');
  assert.equal(foreignRuntime({ node: '22.9.0', v8: '12' }), null);
});

test('a Deno app with a node on its PATH: the Box runs that node, never the deno binary', () => {
  const nodeDir = path.join(scratch, 'node-on-path/bin');
  const node = script(nodeDir, 'node', 'v22.9.0');
  const toolchain = resolveToolchain({
    execPath: deno,
    version: 'v22.0.0',
    versions: { node: '22.0.0', deno: '2.9.6' },
    pathEnv: [path.dirname(deno), nodeDir].join(':'),
    env: {},
  });
  assert.deepEqual(toolchain.node, { path: node, version: 'v22.9.0', runtime: 'Deno 2.9.6' });
  assert.ok(!toolchain.files.includes(deno), 'the deno binary is no toolchain file');
  assert.equal(toolchain.binDirs[0], nodeDir, "node's directory comes first on the Box PATH");
  assert.ok(!toolchain.missing.some((gap) => gap.tool === 'node'));
  assert.equal(missingToolMessage(toolchain, 'node'), null);
});

test("a `node` on PATH that is the app's own runtime (Deno's npm package has one) or answers no Node version is passed over", () => {
  const denoDir = path.join(scratch, 'deno-npm');
  fs.mkdirSync(denoDir, { recursive: true, mode: 0o755 });
  const alias = path.join(denoDir, 'node');
  fs.symlinkSync(deno, alias);
  const fake = script(path.join(scratch, 'fake-node/bin'), 'node', 'deno 2.9.6');
  const real = script(path.join(scratch, 'real-node/bin'), 'node', 'v24.1.0');
  const toolchain = resolveToolchain({
    execPath: alias,
    version: 'v22.0.0',
    versions: { deno: '2.9.6' },
    pathEnv: [denoDir, path.dirname(fake), path.dirname(real)].join(':'),
    env: {},
  });
  assert.deepEqual(toolchain.node, { path: real, version: 'v24.1.0', runtime: 'Deno 2.9.6' });
});

test('a Bun app without node on its PATH: every Box command that needs Node is SANDBOX_PROVIDER_UNAVAILABLE naming it', () => {
  const toolchain = resolveToolchain({
    execPath: bun,
    version: 'v24.3.0',
    versions: { node: '24.3.0', bun: '1.2.0' },
    pathEnv: path.dirname(bun),
    env: {},
  });
  assert.deepEqual(toolchain.node, { path: null, version: null, runtime: 'Bun 1.2.0' });
  assert.ok(!toolchain.files.includes(bun));
  assert.equal(toolchain.missing[0].tool, 'node');
  for (const command of ['node', 'npm', 'pnpm', 'yarn']) {
    assert.match(
      missingToolMessage(toolchain, command),
      /^the local Box host found no Node for its Boxes: the app runs on Bun 1\.2\.0, .*put its node on the app's PATH$/,
      command,
    );
  }
  assert.equal(missingToolMessage(toolchain, 'sh'), null, "a command that is not Node's runs");
  const gaps = hostGaps(
    {
      platform: 'linux',
      isolation: 'bubblewrap',
      syscallFilter: { kind: 'seccomp' },
      netTool: 'slirp4netns',
      cgroup: { kind: 'cgroup-v2' },
      rlimits: 'prlimit',
      toolchain,
    },
    'bubblewrap',
  );
  assert.match(
    gaps[0],
    /^no Node for Boxes, which run Definitions with it \(the app runs on Bun 1\.2\.0\): install Node/,
  );
});

test('a Node app keeps its own binary', () => {
  const toolchain = resolveToolchain({ env: {} });
  assert.deepEqual(toolchain.node, {
    path: fs.realpathSync(process.execPath),
    version: process.version,
    runtime: null,
  });
});
