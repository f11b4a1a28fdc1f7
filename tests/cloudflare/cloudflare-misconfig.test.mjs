// A configuration error of the Cloudflare provider fails at once with the code the docs give and
// the wrangler lines to add, never retried (issue 26, item 4): the real `Sandbox` Durable Object
// of @cloudflare/sandbox 0.12.10 in workerd (miniflare) whose class has no container (the
// constructor of @cloudflare/containers throws "Containers have not been enabled…"), a binding
// that is missing, a binding whose class the Worker does not export or that is another class,
// and a local Box host (SANDBOX_LOCAL_URL) that is not running.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';

// No stand-in container (tests/fixtures/cloudflare/box-host-container.mjs): workerd gives the class none.
const WORKER = `
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
export { Sandbox } from '@cloudflare/sandbox';

registerSandbox('cfm/one', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default () => 1;' },
] });

export default {
  async fetch(request, env) {
    const query = new URL(request.url).searchParams;
    const binding = query.get('binding');
    // ?dead: a local Box host URL where nothing listens (port 9 of loopback: discard, never served here).
    const local = query.has('dead') ? { SANDBOX_LOCAL_URL: 'http://127.0.0.1:9', SANDBOX_LOCAL_TOKEN: 't'.repeat(32) } : {};
    configureSandbox({ provider: 'cloudflare', env: { ...env, ...local }, ...(binding ? { cloudflare: { binding } } : {}) });
    const started = Date.now();
    const response = await runSandbox('cfm/one');
    return Response.json({ status: response.status, body: await response.json(), ms: Date.now() - started });
  },
};
`;

// The same Worker without the export: workerd warns at start-up and every call to the class
// fails ("internal error; reference = …").
const WITHOUT_EXPORT = WORKER.replace("export { Sandbox } from '@cloudflare/sandbox';\n", '');

// The same Worker exporting as Sandbox a Durable Object class of its own (no `configure`).
const OTHER_CLASS = WORKER.replace(
  "export { Sandbox } from '@cloudflare/sandbox';\n",
  "import { DurableObject } from 'cloudflare:workers';\nexport class Sandbox extends DurableObject {}\n",
);

// The same Worker whose Sandbox class throws an error of its own from its constructor (a setting
// it needs is missing, say): no retry can mend that.
const THROWING_CLASS = WORKER.replace(
  "export { Sandbox } from '@cloudflare/sandbox';\n",
  "import { Sandbox as SdkSandbox } from '@cloudflare/sandbox';\nexport class Sandbox extends SdkSandbox {\n  constructor(ctx, env) {\n    throw new Error('the Sandbox class needs env.API_KEY, which is unset');\n    super(ctx, env);\n  }\n}\n",
);

let worker;
let unexported;
let otherClass;
let throwing;
before(async () => {
  assert.notEqual(WITHOUT_EXPORT, WORKER);
  assert.notEqual(OTHER_CLASS, WORKER);
  assert.notEqual(THROWING_CLASS, WORKER);
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-misconfig');
  unexported = await sandboxWorkerOnBoxHost(WITHOUT_EXPORT, 'cf-unexported');
  otherClass = await sandboxWorkerOnBoxHost(OTHER_CLASS, 'cf-other-class');
  throwing = await sandboxWorkerOnBoxHost(THROWING_CLASS, 'cf-throwing-class');
});
after(async () => {
  await worker?.close();
  await unexported?.close();
  await otherClass?.close();
  await throwing?.close();
});

async function run(query = '', on = worker) {
  const response = await on.miniflare.dispatchFetch(`http://worker.test/${query}`);
  return response.json();
}

test('a Sandbox class without containers answers 503 SANDBOX_PROVIDER_UNAVAILABLE within a second, naming the [[containers]] entry', async () => {
  const { status, body, ms } = await run();
  assert.equal(status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.match(body.error.message, /Containers have not been enabled/);
  assert.match(
    body.error.message,
    /has no container: add to wrangler\.toml a \[\[containers\]\] entry with its class_name/,
  );
  assert.match(
    body.error.message,
    /under wrangler dev --enable-containers=false, set SANDBOX_LOCAL_URL and SANDBOX_LOCAL_TOKEN/,
  );
  assert.ok(ms < 1000, `answered after ${ms} ms (retried?)`);
  // Nothing reached the local Box host: no container was ever started.
  assert.equal(worker.host.counters().total, 0);
});

test('a binding the Worker env does not have answers at once with the wrangler lines to add', async () => {
  const { status, body, ms } = await run('?binding=SANDBOXES');
  assert.ok(status >= 400 && status < 600, JSON.stringify(body));
  assert.match(body.error.code, /^SANDBOX_PROVIDER_(REQUIRED|UNAVAILABLE)$/);
  assert.match(body.error.message, /SANDBOXES/);
  assert.match(body.error.message, /durable_objects/);
  assert.ok(ms < 1000, `answered after ${ms} ms`);
});

for (const [what, which, words] of [
  ['whose class the Worker does not export', () => unexported, /internal error; reference = /],
  [
    'to a Durable Object class that is not the Sandbox class',
    () => otherClass,
    /does not implement the method "configure"/,
  ],
]) {
  test(`a binding ${what} answers 503 SANDBOX_PROVIDER_UNAVAILABLE within a second, naming the export to add`, async () => {
    const on = which();
    const { status, body, ms } = await run('', on);
    assert.equal(status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
    assert.match(body.error.message, words);
    assert.match(body.error.message, /export \{ Sandbox \} from '@cloudflare\/sandbox'/);
    assert.match(body.error.message, /class_name/);
    assert.ok(ms < 1000, `answered after ${ms} ms (retried?)`);
    assert.equal(on.host.counters().total, 0);
  });
}

test('a Sandbox class whose constructor throws fails at once with its error, never retried', {
  timeout: 120_000,
}, async () => {
  const { status, body, ms } = await run('', throwing);
  assert.equal(status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.match(body.error.message, /the Sandbox class needs env\.API_KEY, which is unset/);
  assert.match(body.error.message, /the Sandbox Durable Object threw/);
  assert.ok(ms < 1000, `answered after ${ms} ms (retried?)`);
  assert.equal(throwing.host.counters().total, 0);
});

test('a local Box host that is not running answers 503 SANDBOX_PROVIDER_UNAVAILABLE within a second, naming SANDBOX_LOCAL_URL', async () => {
  const { status, body, ms } = await run('?dead');
  assert.equal(status, 503, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.match(body.error.message, /the local Box host at http:\/\/127\.0\.0\.1:9\/cloudflare\/[^ ]+ did not answer/);
  assert.match(body.error.message, /SANDBOX_LOCAL_URL/);
  assert.ok(ms < 1000, `answered after ${ms} ms (retried?)`);
});
