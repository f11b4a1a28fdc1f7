// examples/agent/agent.mjs as a user runs it: the script copied into a fresh app that installs the
// `npm pack` tarball of dist/ and the repository's `ai` version, then `node agent.mjs`: the AI
// SDK's generateText loop with a scripted mock model calls sandbox_exec, which runs
// `node -e "console.log(1+1)"` in a Box on the local provider, and the second step answers with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as sandboxApi from '@vite-hub/sandbox';
import { installTarballApp, repoVersion } from './tarball-app.mjs';
import { repoRoot } from './vite-app.mjs';

const run = promisify(execFile);
const needsSessions = typeof sandboxApi.openSandboxSession === 'function' ? {} : { skip: 'openSandboxSession is not in this build of @vite-hub/sandbox yet' };

test('the agent example runs the tool-call loop against a real Box', needsSessions, async () => {
  const script = readFileSync(join(repoRoot, 'examples', 'agent', 'agent.mjs'), 'utf8');
  const { app } = await installTarballApp('agent', {
    example: false,
    dependencies: { ai: repoVersion('ai') },
    files: { 'agent.mjs': script },
  });
  const { stdout } = await run(process.execPath, ['agent.mjs'], { cwd: app, timeout: 120_000 });
  assert.equal(
    stdout,
    [
      'tool call: sandbox_exec {"command":"node","args":["-e","console.log(1+1)"]}',
      'tool result: {"exitCode":0,"ok":true,"stdout":"2\\n","stderr":""}',
      'answer: node printed 2 (exit code 0)',
      '',
    ].join('\n'),
  );
});
