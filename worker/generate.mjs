// wrangler's build step for the repository's Worker (wrangler.toml `[build] command`): writes the
// generated registry of examples/app (examples/app/.vite-hub/sandbox/build/), the same files
// `vite build` writes, so the Worker bundles one module per example Definition. Needs the built
// package (`node scripts/build.mjs`): it runs the core's build-time rules from dist/.
import { fileURLToPath } from 'node:url';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';

const root = fileURLToPath(new URL('../examples/app/', import.meta.url));
// Provider settings come from the Worker's env at request time (worker/index.mjs), never from the bundle.
const { names } = await generateSandboxArtifacts({ root, mode: 'build', config: {} });
console.log(`[worker] registry of examples/app: ${names.join(', ')}`);
