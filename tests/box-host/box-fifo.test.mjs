// A Box command can make a FIFO where the host later reads or writes a file (`mkfifo report.txt`,
// then `session.readText('report.txt')`). A blocking open(2) of a FIFO waits for its other end,
// so the host's thread (the app's main thread when the host runs in-process) hung for good. The
// host runs in a child process here, so a hang fails the request's deadline instead of this test
// process; every refusal must come at once and the host must keep answering. Under `--isolation
// none` commands see the host's paths, so they make the FIFO by a path relative to the Box cwd.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

const CLI = fileURLToPath(new URL('./cli.mjs', import.meta.resolve('@vite-hub/sandbox/package.json')));
/** Longer than any refusal needs, far shorter than a hang. */
const DEADLINE_MS = 15_000;

let child;
let host;

before(async () => {
  child = spawn(process.execPath, [CLI, 'host', '--isolation', 'none'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  host = JSON.parse(line);
});

after(async () => {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  // A host hung in an open(2) never runs its SIGTERM handler.
  const stuck = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(stuck);
});

async function request(route, body) {
  const res = await fetch(`${host.baseUrl}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  return { status: res.status, text: await res.text() };
}

test('Vercel routes: fs/read of a FIFO the Box made is refused at once (400), and the host keeps answering', async () => {
  const created = await request('/v3/sandboxes', { projectId: 'p', ports: [] });
  assert.equal(created.status, 200, created.text);
  const sid = JSON.parse(created.text).session.id;
  const made = await request(`/v2/sandboxes/sessions/${sid}/cmd`, {
    command: 'mkfifo',
    args: ['report.txt'],
    wait: true,
  });
  assert.equal(made.status, 200, made.text);
  assert.equal(JSON.parse(made.text.trim().split('\n').at(-1)).command.exitCode, 0, made.text);

  const read = await request(`/v2/sandboxes/sessions/${sid}/fs/read`, { path: '/vercel/sandbox/report.txt' });
  assert.equal(read.status, 400, read.text);
  assert.match(read.text, /not a regular file/);

  const after = await request(`/v2/sandboxes/sessions/${sid}/cmd`, { command: 'true', wait: true });
  assert.equal(after.status, 200, after.text);
});

test('Cloudflare routes: /api/read and /api/write of a FIFO the Box made are refused at once, and the host keeps answering', async () => {
  const id = `fifo-${process.pid}`;
  const made = await request(`/cloudflare/${id}/api/execute`, {
    command: 'mkfifo pipe',
    sessionId: '__DISABLE_SESSION__',
  });
  assert.equal(made.status, 200, made.text);
  assert.equal(JSON.parse(made.text).exitCode, 0, made.text);

  const read = await request(`/cloudflare/${id}/api/read`, { path: '/workspace/pipe' });
  assert.equal(read.status, 400, read.text);
  assert.match(read.text, /not a regular file/);
  const write = await request(`/cloudflare/${id}/api/write`, { path: '/workspace/pipe', content: 'x' });
  assert.equal(write.status, 400, write.text);
  assert.match(write.text, /not a regular file/);

  const written = await request(`/cloudflare/${id}/api/write`, { path: '/workspace/ok.txt', content: 'fine' });
  assert.equal(written.status, 200, written.text);
  const back = await request(`/cloudflare/${id}/api/read`, { path: '/workspace/ok.txt' });
  assert.equal(JSON.parse(back.text).content, 'fine');
});

test('a Run whose handler leaves a FIFO as its result file and dies answers at once, and the process stays alive (it froze for good)', () => {
  // In a child with the in-process host, as in `vite dev` or a built server on the local provider:
  // the handler replaces the harness's result file with a FIFO and kills itself, so no result
  // frame comes and the Run reads that file.
  const script = `
    import { registerSandbox, runSandbox } from '@vite-hub/sandbox';
    registerSandbox('fifo-result', { files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: "import { execFileSync } from 'node:child_process'; export default () => { execFileSync('mkfifo', ['../.vite-hub/output.json']); process.kill(process.pid, 'SIGKILL'); }" },
    ] });
    registerSandbox('after', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default () => 42' }] });
    const fifo = await runSandbox('fifo-result');
    const after = await runSandbox('after');
    console.log(JSON.stringify({ fifo: fifo.status, after: after.status, value: await after.json() }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_ENV: 'development' },
  });
  assert.equal(child.signal, null, `the Run froze its process (killed at the deadline): ${child.stderr}`);
  const answer = JSON.parse(child.stdout.trim().split('\n').at(-1));
  assert.ok(answer.fifo >= 400, JSON.stringify(answer));
  assert.deepEqual({ after: answer.after, value: answer.value }, { after: 200, value: 42 });
});
