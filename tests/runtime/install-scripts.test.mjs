// A Definition's own install scripts run in its Box before its handler (issue 32, item 6): its
// `postinstall` must find neither the Run's nonce nor a harness it could replace. Before, the
// harness and the input envelope were staged with the project, so a postinstall read the nonce
// from .vite-hub/input.json and rewrote .vite-hub/harness.mjs to print a framed error claiming
// a package code (SANDBOX_TRANSFER_LIMIT with its details): the Run answered that instead of the
// handler's result. Real local Box host, real `npm ci` of slugify from the npm registry.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { SLUGIFY_LOCK } from '../support/local-host.mjs';

// Runs at the install, in the package directory (<run>/project): the harness and input are in
// <run>/.vite-hub/. It writes what it found where the handler reads it (in node_modules: what an
// install leaves elsewhere is cleaned away before the prepared project's snapshot), then plants a harness
// that claims a package code (with the nonce, when it found one) and a fallback output file.
const FORGE = `const fs = require('node:fs');
const dir = '../.vite-hub';
let nonce = null;
try { nonce = JSON.parse(fs.readFileSync(dir + '/input.json', 'utf8')).nonce; } catch {}
const hadHarness = fs.existsSync(dir + '/harness.mjs');
fs.writeFileSync('node_modules/.postinstall-saw.json', JSON.stringify({ nonce: nonce !== null, harness: hadHarness }));
fs.mkdirSync(dir, { recursive: true });
const error = { name: 'Error', message: 'forged by postinstall', code: 'SANDBOX_TRANSFER_LIMIT', details: { limit: 'maxOutputBytes', value: 1, maximum: 0 } };
const frame = '<<vite-hub-sandbox:' + nonce + '>>' + JSON.stringify({ version: 1, ok: false, error }) + '\\n';
fs.writeFileSync(dir + '/harness.mjs', 'process.stdout.write(' + JSON.stringify(frame) + '); process.exit(1);\\n');
fs.writeFileSync(dir + '/output.json', JSON.stringify({ version: 1, ok: false, error }));
`;

const INDEX = `import fs from 'node:fs';
import slugify from 'slugify';
export default (payload) => ({ slug: slugify(payload.title, { lower: true }), saw: JSON.parse(fs.readFileSync('node_modules/.postinstall-saw.json', 'utf8')) });
`;

let host;
before(async () => {
  host = await startBoxHost({});
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});
after(async () => {
  configureSandbox({});
  await host?.close();
});

test("a postinstall finds neither the nonce nor the harness, so it cannot forge the Run's result", {
  timeout: 180_000,
}, async () => {
  registerSandbox('install/forge', {
    files: [
      {
        path: 'package.json',
        content: JSON.stringify({
          name: 'forge',
          private: true,
          type: 'module',
          dependencies: { slugify: '1.6.9' },
          scripts: { postinstall: 'node forge.cjs' },
        }),
      },
      { path: 'package-lock.json', content: JSON.stringify({ name: 'forge', ...SLUGIFY_LOCK }) },
      { path: 'forge.cjs', content: FORGE },
      { path: 'index.mjs', content: INDEX },
    ],
  });
  const response = await runSandbox('install/forge', { title: 'Forged Or Not' });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  assert.deepEqual(JSON.parse(body), { slug: 'forged-or-not', saw: { nonce: false, harness: false } });
  assert.match(
    response.headers.get('server-timing') ?? '',
    /install;desc="[^"]+";dur=[\d.]+, prepare;dur=[\d.]+, stage;dur=/,
    'the harness and input were staged after the install (in the Box made from its snapshot)',
  );
});
