// `@vite-hub/sandbox/agent` as a user gets it: a fresh app that installs the `npm pack` tarball of
// dist/ and the repository's `ai` version. examples/agent/agent.mjs runs there (`node agent.mjs`:
// the AI SDK's generateText loop with a scripted mock model calls sandbox_exec, which runs
// `node -e "console.log(1+1)"` in a Box on the local provider, and the second step answers with
// it), and tsc checks that the package's types give generateText a tool it accepts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installTarballApp, repoVersion } from '../support/tarball-app.mjs';
import { removeDir, repoRoot } from '../support/vite-app.mjs';

const run = promisify(execFile);

const typeCheck = `import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { sandbox, type SandboxExecResult, type SandboxExecMcpResult } from '@vite-hub/sandbox/agent';

const capability = sandbox({ commands: ['node'], env: ['A'] });
const allowedEnv: readonly string[] = capability.env;
export async function run(): Promise<string> {
  const result = await generateText({ model: new MockLanguageModelV3({}), tools: capability.tools, stopWhen: stepCountIs(2), prompt: 'x' });
  const direct: SandboxExecResult = await capability.tools.sandbox_exec.execute({ command: 'node', args: ['-v'], env: { A: '1' }, timeout: 1000 }, {});
  const mcp: SandboxExecMcpResult = await capability.callMcpTool({ name: 'sandbox_exec', arguments: { command: 'node' } });
  await using scoped = sandbox({ commands: ['ls'], session: { timeout: 60_000 } });
  // @ts-expect-error commands is required
  sandbox({});
  // @ts-expect-error env lists names; the values come from the agent's input
  sandbox({ commands: ['node'], env: { A: '1' } });
  return result.text + direct.stdout + mcp.content[0].text + scoped.commands.join() + allowedEnv.join();
}
`;

let app;
let packDir;
before(async () => {
  ({ app, packDir } = await installTarballApp('agent', {
    example: false,
    dependencies: { ai: repoVersion('ai') },
    files: {
      'agent.mjs': readFileSync(join(repoRoot, 'examples', 'agent', 'agent.mjs'), 'utf8'),
      'check.ts': typeCheck,
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          lib: ['es2022', 'esnext.disposable', 'dom'],
        },
        files: ['check.ts'],
      }),
    },
  }));
});

after(() => {
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

test('the agent types give generateText a tool it accepts (tsc against the installed tarball)', async () => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, timeout: 120_000 }).catch((error) => {
    assert.fail(`tsc failed:\n${error.stdout}${error.stderr}`);
  });
});

test('the agent example runs the tool-call loop against a real Box', async () => {
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
