// A Vite + Nitro app deployed as a Cloudflare Worker: Nitro's cloudflare-module preset builds the
// Worker into .output/server/, and hubSandbox({ provider: 'cloudflare' }) adds the Provider Output
// (the Sandbox Durable Object binding, its migration, the container, nodejs_compat) to the
// wrangler.json Nitro writes there, plus the `Sandbox` export of the Worker.
import { defineConfig } from 'vite';
import { nitro } from 'nitro/vite';
import { hubSandbox } from '@vite-hub/sandbox/vite';

export default defineConfig({
  plugins: [hubSandbox({ provider: 'cloudflare' }), nitro()],
  nitro: { srcDir: 'server', preset: 'cloudflare-module' },
});
