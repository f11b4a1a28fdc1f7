// The example app: Vite 7 + Nitro v3 (server routes in server/api/), hubSandbox() for the
// Definitions in server/sandboxes/. `vite dev` serves it; `vite build` writes .output/.
import { defineConfig } from 'vite';
import { nitro } from 'nitro/vite';
import { hubSandbox } from '@vite-hub/sandbox/vite';

export default defineConfig({
  plugins: [hubSandbox(), nitro()],
  nitro: { srcDir: 'server' },
});
