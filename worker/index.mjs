// The repository's own Worker (top-level wrangler.toml): `POST /sandboxes/<name>` with a JSON
// payload answers runSandbox(name, payload)'s Response for the example Definitions of
// examples/app (the generated registry worker/generate.mjs writes). It exports the Sandbox
// Durable Object class of @cloudflare/sandbox, which the cloudflare provider's binding names.
import { configureSandbox, runSandbox } from '../examples/app/.vite-hub/sandbox/build/sandbox.mjs';

export { Sandbox } from '@cloudflare/sandbox';

const PREFIX = '/sandboxes/';

/**
 * Provider settings from the Worker's env, once per isolate. `LOCAL_BOX_HOST_URL` and
 * `LOCAL_BOX_HOST_TOKEN` (development and tests only, e.g. in .dev.vars) run Definitions on a
 * local Box host (`vite-hub-sandbox host`) through the `local` provider; otherwise the
 * `cloudflare` provider uses the Durable Object binding `SANDBOX` of `env`.
 */
let configured = false;
function configure(env) {
  if (configured) return;
  configured = true;
  if (env.LOCAL_BOX_HOST_URL) {
    configureSandbox({ provider: 'local', local: { baseUrl: env.LOCAL_BOX_HOST_URL, token: env.LOCAL_BOX_HOST_TOKEN } });
  } else {
    configureSandbox({ provider: 'cloudflare', env });
  }
}

const error = (status, code, message) => Response.json({ error: { code, message } }, { status });

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith(PREFIX) || pathname.length === PREFIX.length) {
      return error(404, 'SANDBOX_NOT_FOUND', 'POST /sandboxes/<name> with a JSON payload runs the Definition <name>');
    }
    if (request.method !== 'POST') return error(405, 'SANDBOX_INVALID_ARGUMENT', `use POST ${pathname}`);
    let payload;
    try {
      const text = await request.text();
      payload = text === '' ? undefined : JSON.parse(text);
    } catch {
      return error(400, 'SANDBOX_INVALID_ARGUMENT', 'the request body must be JSON');
    }
    configure(env);
    return runSandbox(decodeURIComponent(pathname.slice(PREFIX.length)), payload);
  },
};
