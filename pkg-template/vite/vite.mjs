// `@vite-hub/sandbox/vite`: the Vite plugin hubSandbox(). Discovers and prepares the app's
// Definitions into a generated registry (generate.mjs), points server code's
// `import ... from '@vite-hub/sandbox'` at the generated facade, and regenerates in `vite dev`.
// Config rules live in the core (crates/tooling/src/plugin.rs); see docs/internals/build-steps.md "Vite plugin".
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as wasm from './tooling-wasm.mjs';
import { pickSandboxEnv } from '../runtime/api.mjs';
import { configureSandbox, warmUp } from '../runtime/index.node.mjs';
import { offerLocalBoxHost } from '../runtime/shared-host.mjs';
import { GENERATED_DIR, generateSandboxArtifacts } from './generate.mjs';
import { isSkippedDirectory } from './discovery.mjs';
import { cloudflareNitroModule } from './provider-output.mjs';
import {
  externalizeRuntimeWasm,
  isRuntimeWasmImport,
  rewriteRuntimeWasmImport,
  writeRuntimeWasm,
} from './worker-wasm.mjs';

const PACKAGE = '@vite-hub/sandbox';
const RUNTIME = '@vite-hub/sandbox/runtime';
/**
 * `@vite-hub/sandbox/mcp` in server code: a shim that loads the facade (the registry) first, since a
 * route may import nothing else, and hands the package's MCP module (external in a Node build, so
 * its own `@vite-hub/sandbox` is the runtime, not the facade) the registry's tool facts and the
 * build's `import.meta.env.PROD` (which Vite never replaces in an external package). Read with
 * Reflect.get: a facade without them must not become a static import of a missing export.
 */
const MCP = '@vite-hub/sandbox/mcp';
const MCP_SHIM = '\0vite-hub-sandbox-mcp';
const mcpShim = () => `import * as registry from ${JSON.stringify(PACKAGE)};
import { __setBundledProduction, setDefinitionToolFacts } from ${JSON.stringify(MCP)};
const facts = Reflect.get(registry, '__sandboxToolFacts');
if (typeof facts === 'function') setDefinitionToolFacts(facts);
__setBundledProduction(import.meta.env.PROD);
export * from ${JSON.stringify(MCP)};
`;
const MANIFESTS = new Set([
  'package.json',
  'package-lock.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'yarn.lock',
  'bun.lock',
]);

function isWorker(config) {
  const conditions = config?.resolve?.conditions ?? [];
  return conditions.includes('workerd') || conditions.includes('worker') || config?.ssr?.target === 'webworker';
}

/** Whether an environment's raw options (in `configEnvironment`) describe a server environment. */
function isServerEnvironment(name, config) {
  return (config.consumer ?? (name === 'client' ? 'client' : 'server')) === 'server';
}

/**
 * `configEnvironment`: keeps `@vite-hub/sandbox` going through this plugin in a server
 * environment, in dev and build (docs/internals/build-steps.md, "Resolution in every server environment").
 *
 * Vite decides SSR externals from the config *before* any plugin `resolveId` runs: a package
 * that lives in node_modules is externalized (Node imports it as is), so the facade swap in
 * `resolveId` would never run and `runSandbox` would see no registry. So the package is made
 * `noExternal` (the `noExternal` list wins over `external: true`), an explicit
 * `external: ['@vite-hub/sandbox']` of the app is dropped (it would win over `noExternal`), and
 * in a Node dev server `@vite-hub/sandbox/runtime` — what the facade imports — is listed as
 * external by its exact id (checked before `noExternal`), so Node loads the wasm and the Box
 * host from the package's own directory. Worker environments bundle everything, runtime included.
 * In a client environment the package is excluded from dependency pre-bundling (its wasm URL).
 * @param {string} name the environment's name
 * @param {object} config its raw options (mutated only to drop the package from `resolve.external`)
 * @param {{ command: 'build' | 'serve', isSsrTargetWebworker?: boolean }} env
 * @returns {object | undefined} options Vite merges into the environment's
 */
function sandboxEnvironmentOptions(name, config, env) {
  // A browser environment: the package stays out of dependency pre-bundling, which would move
  // its glue to node_modules/.vite/deps/ where `new URL('…_bg.wasm', import.meta.url)` finds no
  // .wasm (the dev server answers index.html: "CompileError … 3c 21 64 6f").
  if (!isServerEnvironment(name, config)) return { optimizeDeps: { exclude: [PACKAGE, RUNTIME] } };
  const external = config.resolve?.external;
  if (Array.isArray(external)) config.resolve.external = external.filter((id) => id !== PACKAGE);
  const worker = env.isSsrTargetWebworker || isWorker(config);
  const keepRuntimeExternal = env.command === 'serve' && !worker && external !== true;
  return { resolve: { noExternal: [PACKAGE], ...(keepRuntimeExternal ? { external: [RUNTIME] } : {}) } };
}

/** Whether a changed file can change the generated registry (app-root relative, POSIX). */
export function isSandboxInput(relative) {
  if (!isAppSource(relative)) return false;
  return (
    relative.startsWith('server/sandboxes/') ||
    /\.sandbox\.[cm]?[jt]s$/.test(relative) ||
    MANIFESTS.has(path.posix.basename(relative))
  );
}

/**
 * Whether `relative` (app-root relative, POSIX) is inside the app and under no directory discovery
 * skips (dependencies, build output such as .output/ or dist/, dot-directories such as .vite-hub/).
 */
function isAppSource(relative) {
  const directories = relative.split('/').slice(0, -1);
  return !relative.startsWith('..') && !directories.some(isSkippedDirectory);
}

/** The dev provider notice is printed once per process, not on every Vite restart. */
let devProviderAnnounced = false;
/** A failed warm-up of the local Box host is reported once per process. */
let warmUpFailureReported = false;

/**
 * `vite dev` on the local provider without `local.baseUrl`: starts the in-process local Box host
 * ahead of the first Run, with the plugin's options (`warmUp()` of the Node entry, the one host
 * every Run shares; a dev server in a worker thread borrows it, see `config`). Never awaited and
 * never thrown: dev startup goes on, a failure is printed once and the first Run tries again (and
 * reports its own error).
 */
function warmUpLocalBoxHost(resolved, logger) {
  if (!runsOnInProcessHost(resolved)) return;
  // The host starts once per process with the options in force: the plugin's (`local.isolation`,
  // `local.parked`), which the generated facade sets again when the server code loads it.
  configureSandbox(resolved.config);
  warmUp().catch((error) => {
    if (warmUpFailureReported) return;
    warmUpFailureReported = true;
    logger.warn(
      `[sandbox] the local Box host did not start ahead (${error?.code ? `${error.code}: ` : ''}${error?.message ?? error}); the first Run will try again.`,
      { timestamp: true },
    );
  });
}

/** Whether dev Runs go to the in-process local Box host: provider `local` without `local.baseUrl`. */
function runsOnInProcessHost(resolved) {
  return resolved.devProvider === 'local' && !resolved.config?.local?.baseUrl;
}

/** The Nitro plugin that warms the in-process host up when the server starts (nitro-warm-up.mjs), by absolute path. */
const NITRO_WARM_UP = fileURLToPath(new URL('./nitro-warm-up.mjs', import.meta.url));

/**
 * The Nitro module that adds nitro-warm-up.mjs to the server's plugins, where Runs may go to the
 * in-process local Box host: `vite dev` on it; a build whose provider is `local` without
 * `local.baseUrl`, or not named at build time (the built server's env chooses it; the plugin then
 * starts nothing unless that choice is the in-process host), for a long-lived Node server only
 * (`isLongLivedNodeServer`). `undefined` where none is needed.
 * @param {'serve' | 'build'} command
 * @param {ReturnType<typeof resolveSandboxPluginConfig>} early the plugin config resolved in `config`
 */
function nitroWarmUpModule(command, early) {
  const used =
    command === 'serve'
      ? runsOnInProcessHost(early)
      : early.provider === null || (early.provider === 'local' && !early.config?.local?.baseUrl);
  if (!used) return undefined;
  return {
    name: 'vite-hub-sandbox:warm-up',
    setup(nitro) {
      if (nitro.options.dev || isLongLivedNodeServer(nitro.options.entry)) nitro.options.plugins.push(NITRO_WARM_UP);
    },
  };
}

/**
 * The Nitro module that has a Node server's output carry the package. A Node build keeps
 * `@vite-hub/sandbox/runtime` external (it loads its .wasm and the Box host from disk). Nitro
 * 3.0.0 traces every external into `.output/server/node_modules`; later Nitro 3 builds bundle
 * the rest and trace only the packages of `nitro.options.traceDeps` (default `[]`), so without
 * this entry their output would import a package it does not carry. Nitro traces files, from the
 * runtime entry: the build steps and their libraries stay out (tests/e2e/zero-config.test.mjs).
 */
const NITRO_TRACE_MODULE = {
  name: 'vite-hub-sandbox:trace',
  setup(nitro) {
    const traced = nitro.options.traceDeps;
    if (Array.isArray(traced) && !traced.includes(PACKAGE)) traced.push(PACKAGE);
  },
};

/**
 * Whether a Nitro build's server entry is one of Nitro's own long-lived Node servers
 * (`presets/node/runtime/node-server`, `node-cluster`, `node-middleware`): the default of a
 * `vite build` off any platform, and the base of the VM and container hosts' presets (Heroku,
 * Render, Koyeb, …). A serverless or Worker preset (Vercel, Netlify, AWS Lambda, Cloudflare, …)
 * has no process to keep a Box host in, and its cold starts should not load the runtime for
 * routes that never run a Definition.
 */
function isLongLivedNodeServer(entry) {
  return (
    typeof entry === 'string' &&
    /[\\/]presets[\\/]node[\\/]runtime[\\/]node-(server|cluster|middleware)(\.mjs)?$/.test(entry)
  );
}

/**
 * Merges and validates the plugin's config layers with the core.
 * @param {object | undefined} options `hubSandbox(options)`
 * @param {object | undefined} viteKey the Vite config key `sandbox`
 * @param {Record<string, string | undefined>} env e.g. `process.env`
 * @returns {{ config: object, provider: import('../runtime/index.d.ts').SandboxProviderName | null, devProvider: import('../runtime/index.d.ts').SandboxProviderName }}
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` (credentials, unknown keys, bad values, unknown provider).
 */
export function resolveSandboxPluginConfig(options, viteKey, env = process.env) {
  return wasm.resolveSandboxPluginConfig({
    plugin: asData(options ?? null),
    vite: asData(viteKey ?? null),
    env: pickSandboxEnv(env),
  });
}

/** Config as plain data for the core: a function (e.g. `fetch`) becomes the string "[function]", so its key is still seen (and refused). */
function asData(value) {
  if (typeof value === 'function') return '[function]';
  if (Array.isArray(value)) return value.map(asData);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asData(item)]));
}

/**
 * The Vite plugin. `false` disables it (no discovery, `@vite-hub/sandbox` is left alone).
 * @param {import('./vite.d.ts').SandboxOptions | false} [options]
 */
export function hubSandbox(options) {
  if (options === false) return { name: 'vite-hub-sandbox', apply: () => false };
  let root;
  let command;
  let resolved;
  let facade;
  let logger;
  /** @type {Promise<unknown>} the (re)generation in progress; the next one waits for it */
  let generation = Promise.resolve();
  /** Files outside the Definition folders the last good generation was built from (free-form imports). */
  let builtFrom = new Set();
  /** Whether the last generation reported an error (so its recovery is reported too). */
  let failing = false;
  /** Per Vite environment: the runtime wasm emitted into a Worker build (worker-wasm.mjs). */
  const workerWasm = new Map();
  const wasmState = (environment) => {
    const key = environment?.name ?? '';
    if (!workerWasm.has(key)) workerWasm.set(key, {});
    return workerWasm.get(key);
  };

  /**
   * Dev: the problem line last printed per Definition name (per message for a folder without a
   * name; `*` for a whole failed generation). A problem prints once: again only when its text
   * changes, or after it was fixed and comes back; a save of another file does not repeat it.
   */
  let reported = new Map();
  const problemLine = (error, kept) =>
    `[sandbox] ${error.code ? `${error.code}: ` : ''}${error.message} (keeping ${kept})`;
  /** Prints the lines of `problems` (key → line) not already printed for their key; remembers exactly these. */
  const report = (problems) => {
    for (const [key, line] of problems) if (reported.get(key) !== line) logger.error(line, { timestamp: true });
    reported = problems;
  };
  /** Logs a failed (re)generation in dev: every Definition stays as last generated. */
  const keepLastGood = (error) =>
    report(new Map([...reported, ['*', problemLine(error, 'the last good Definitions')]]));

  /** Dev: when the generated directory was deleted while the server runs, writes it again. */
  const ensureDevGeneration = async () => {
    if (command !== 'serve' || existsSync(facade)) return;
    generation = generation.then(() => generate('dev')).catch((error) => keepLastGood(error));
    await generation;
  };

  const generate = async (mode) => {
    const result = await generateSandboxArtifacts({ root, mode, config: resolved.config });
    builtFrom = new Set(result.inputs);
    failing = result.errors.length > 0;
    const kept = (name) =>
      name === null
        ? 'it out of the registry until it is fixed'
        : result.names.includes(name)
          ? `the last good version of "${name}"`
          : `"${name}" out of the registry until it is fixed`;
    report(
      new Map(
        result.errors.map(({ name, error }) => [
          name ?? `${error.code}: ${error.message}`,
          problemLine(error, kept(name)),
        ]),
      ),
    );
    return result;
  };

  return {
    name: 'vite-hub-sandbox',
    enforce: 'pre',
    // `vite preview` serves what `vite build` wrote: nothing to generate, and no provider to
    // resolve (preview runs with NODE_ENV=production, where none is chosen implicitly).
    apply: (_config, env) => !env.isPreview,
    async config(userConfig, { command: viteCommand }) {
      // Before a framework starts a worker thread for the dev server (Nitro v3 does in its config
      // hook): such a worker then borrows the host warmUp() starts below (runtime/shared-host.mjs).
      if (viteCommand === 'serve') await offerLocalBoxHost();
      const early = resolveSandboxPluginConfig(options, userConfig.sandbox);
      // Nitro modules, added before Nitro's own config hook creates Nitro (without Nitro the key
      // is unread). Nitro's server (in dev, its worker) warms its own path to the in-process host
      // up when it starts, not in its first request (nitro-warm-up.mjs).
      const warmUpModule = nitroWarmUpModule(viteCommand, early);
      // provider 'cloudflare' + a Nitro Worker preset: the Provider Output (provider-output.mjs).
      if (viteCommand !== 'build') return warmUpModule && { nitro: { modules: [warmUpModule] } };
      if (early.provider !== 'cloudflare')
        return { nitro: { modules: [warmUpModule, NITRO_TRACE_MODULE].filter(Boolean) } };
      const module = cloudflareNitroModule({
        root: path.resolve(userConfig.root ?? process.cwd()),
        binding: early.config.cloudflare?.binding,
        userCompatibilityDate: Boolean(userConfig.nitro?.compatibilityDate),
        logger: {
          info: (message) => logger?.info(message, { timestamp: true }),
          warn: (message) => logger?.warn(message, { timestamp: true }),
        },
      });
      return { nitro: { modules: [module] } };
    },
    configEnvironment(name, config, env) {
      return sandboxEnvironmentOptions(name, config, env);
    },
    configResolved(config) {
      root = config.root;
      command = config.command;
      logger = config.logger;
      resolved = resolveSandboxPluginConfig(options, config.sandbox);
      facade = path.join(root, GENERATED_DIR, command === 'serve' ? 'dev' : 'build', 'sandbox.mjs');
    },
    async buildStart() {
      workerWasm.set(this.environment?.name ?? '', {});
      // Build: once per environment is cheap (write-if-changed); an error fails the build.
      if (command !== 'serve') {
        generation = generation.then(() => generate('build'));
        await generation;
        return;
      }
      // Dev: a broken Definition at startup keeps the last good generation of a previous run, if
      // there is one on disk (without one there is nothing to serve, and the error stops `vite dev`).
      generation = generation
        .then(() => generate('dev'))
        .catch((error) => {
          if (!existsSync(facade)) throw error;
          failing = true;
          keepLastGood(error);
        });
      await generation;
    },
    configureServer(server) {
      if (resolved.provider === null && !devProviderAnnounced) {
        devProviderAnnounced = true;
        logger.info(
          `[sandbox] no provider configured: vite dev runs Definitions on the "${resolved.devProvider}" provider (set hubSandbox({ provider }) or env SANDBOX_PROVIDER to change it).`,
          { timestamp: true },
        );
      }
      warmUpLocalBoxHost(resolved, logger);
      let timer;
      const regenerate = (file) => {
        const relative = path.relative(root, file).split(path.sep).join('/');
        // While a generation fails, any app file may be the fix: a free-form Definition that does
        // not bundle has no inputs to watch (a broken or new import, a file deleted and written
        // again, a server started while broken), so only the last good build's are known.
        if (isSandboxInput(relative) || builtFrom.has(relative) || (failing && isAppSource(relative))) regenerateNow();
      };
      const regenerateNow = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          generation = generation.then(async () => {
            try {
              const hadErrors = failing;
              const result = await generate('dev');
              if (result.changed.length)
                logger.info(`[sandbox] regenerated (${result.names.join(', ') || 'no Definitions'})`, {
                  timestamp: true,
                });
              if (hadErrors && !failing) logger.info('[sandbox] every Definition is valid again', { timestamp: true });
            } catch (error) {
              failing = true;
              keepLastGood(error);
            }
          });
        }, 50);
      };
      server.watcher.add([path.join(root, 'server/sandboxes'), path.join(root, '**/*.sandbox.*')]);
      server.watcher.on('add', regenerate);
      server.watcher.on('change', regenerate);
      server.watcher.on('unlink', regenerate);
      // The generated dev files deleted by hand: write them again at once (not on the next request).
      server.watcher.on('unlink', (file) => {
        // (The generator's own temp files are renamed away, which the watcher also reports as unlinks.)
        if (file.startsWith(`${path.dirname(facade)}${path.sep}`) && !file.endsWith('.tmp')) regenerateNow();
      });
    },
    async load(id) {
      if (id === MCP_SHIM) return mcpShim();
      if (id === facade || id.startsWith(`${path.dirname(facade)}${path.sep}`)) await ensureDevGeneration();
      return null;
    },
    async resolveId(id, importer, opts) {
      const environment = this.environment;
      const isServer = environment ? environment.config.consumer === 'server' : Boolean(opts?.ssr);
      if (!isServer) return null;
      // The facade installs the registry when it is evaluated: never tree-shaken as side-effect free.
      if (id === PACKAGE && importer !== facade) {
        await ensureDevGeneration();
        return { id: facade, moduleSideEffects: true };
      }
      if (id === MCP && importer !== MCP_SHIM) return { id: MCP_SHIM, moduleSideEffects: true };
      // Node server builds keep the package external (it loads its .wasm and the Box host from
      // disk); Worker builds (workerd/worker conditions) bundle it, the .wasm as a module import.
      if (id === RUNTIME && command === 'build' && !isWorker(environment?.config ?? this.environment?.config))
        return { id: RUNTIME, external: true };
      // Worker build: the runtime .wasm stays a module import (CompiledWasm for Wrangler/workerd), copied beside the bundle.
      if (command === 'build' && isRuntimeWasmImport(id, importer))
        return externalizeRuntimeWasm(wasmState(this.environment), id, importer);
      return null;
    },
    renderChunk(code, chunk) {
      return rewriteRuntimeWasmImport(wasmState(this.environment), code, chunk);
    },
    writeBundle(outputOptions) {
      writeRuntimeWasm(wasmState(this.environment), outputOptions);
    },
  };
}

export default hubSandbox;
export { generateSandboxArtifacts };
