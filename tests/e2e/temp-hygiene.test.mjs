// The node tests that make temporary folders remove them: each such test file (every file of the
// lanes but conformance calling mkdtemp, except the Vite ones, which are checked elsewhere, and
// the slow Box-host ones, which already clean up in finally/after) is run with TMPDIR pointing at
// an empty folder, which must be empty again afterwards. In the slow lane: the inner run holds
// end-to-end files (the tarball installs that mkdtemp).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FAST_LANES, SLOW_LANES, laneDir, laneHasTests } from '../support/lanes.mjs';

const SKIPPED = new Set(['box-host.test.mjs', 'examples.test.mjs', 'exit-cleanup.test.mjs', 'temp-hygiene.test.mjs']);
// The conformance lane never was in this check (it keeps its own SDK folders).
const LANES = [...FAST_LANES, ...SLOW_LANES].filter((lane) => lane !== 'conformance' && laneHasTests(lane));
const files = LANES.flatMap((lane) =>
  fs
    .readdirSync(laneDir(lane))
    .filter((name) => name.endsWith('.test.mjs') && !name.startsWith('vite-') && !SKIPPED.has(name))
    .map((name) => path.join(laneDir(lane), name)),
).filter((file) => fs.readFileSync(file, 'utf8').includes('mkdtemp'));

test('test files that mkdtemp leave no temporary folder behind', async (t) => {
  assert.ok(files.length >= 4, `found ${files.map((file) => path.relative(laneDir('..'), file)).join(', ')}`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-hygiene-'));
  // The Box root of the inner hosts (TMPDIR): Box users of a root host must reach it, and it holds
  // the inner tests' folders too, so it is made searchable here (box-user.mjs refuses otherwise).
  fs.chmodSync(scratch, 0o701);
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  // NODE_TEST_CONTEXT would make the inner runner report into this one instead of running.
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  try {
    await promisify(execFile)(process.execPath, ['--test', ...files], {
      env: { ...env, TMPDIR: scratch },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    // Name the inner tests that failed (and their errors), not only the command line.
    const lines = String(error.stdout ?? '').split('\n');
    const failed = lines.flatMap((line, at) => (/^\s*not ok /.test(line) ? [lines.slice(at, at + 12).join('\n')] : []));
    assert.fail(
      `the inner run failed (exit ${error.code}):\n${failed.join('\n') || String(error.stderr ?? '').slice(-4000)}`,
    );
  }
  assert.deepEqual(fs.readdirSync(scratch), []);
});
