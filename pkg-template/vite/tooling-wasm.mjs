// The tooling wasm module (Node only): the build-time rules of the core (discovery, module graph,
// project reading, free-form preparation, Vite config), compiled with the cargo feature `tooling`.
// Instantiated synchronously from disk the first time a build step imports this file; the runtime
// entries never do, so Workers, browsers and servers that only run Definitions never load it.
import { readFileSync } from 'node:fs';
import * as tooling from '../wasm/vite_hub_sandbox_tooling.js';

tooling.initSync({ module: readFileSync(new URL('../wasm/vite_hub_sandbox_tooling_bg.wasm', import.meta.url)) });

export const {
  discoverDefinitions,
  discoverDefinitionsAndProblems,
  checkSandboxOptions,
  planFreeFormProject,
  checkModuleGraph,
  resolvePnpmWorkspace,
  isExcludedPath,
  resolveSandboxPluginConfig,
  sandboxArtifactStems,
  sharedFacts,
  mergeCloudflareProviderOutput,
  cloudflareCompatibilityDate,
} = tooling;
