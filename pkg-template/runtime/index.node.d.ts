/**
 * `@vite-hub/sandbox` in Node: everything every runtime has (index.d.ts) plus what only the Node
 * entry (index.node.mjs) exports: reading a Definition folder, discovery and free-form
 * preparation (the build steps under vite/, loaded on first use), and the in-process local Box
 * host (`warmUp`, `closeLocalBoxHost`). The package's `node` condition names this file, and so
 * does its `types` fallback, which TypeScript takes when it knows no runtime (`moduleResolution:
 * "bundler"`, as Vite and Nitro apps have it).
 */

export * from './index.js';
import type { DefinitionFile, DefinitionSource } from './index.js';

/** Options of {@link readDefinitionDirectory}. */
export interface ReadDefinitionOptions {
  /** The app root: `pnpm-workspace.yaml` is searched from the folder upwards up to (and including) it. Without it only the folder itself can be a workspace root. */
  appRoot?: string;
}

/**
 * Node only: reads a Definition folder, skipping `node_modules/`, `.git/`, `.env*`, `.npmrc`,
 * `bun.lockb`, and compiles TypeScript (`X.ts` → `X.ts.mjs`). When the folder is a pnpm workspace
 * root, or a package matching the `packages:` globs of a workspace above it (up to
 * `options.appRoot`, unless its `packageManager` names npm/yarn/bun), the files are relative to
 * the workspace root and hold its `package.json`, `pnpm-workspace.yaml`, `pnpm-lock.yaml`, patch
 * files and the package's `workspace:` dependency closure; `packagePath` is then the package's
 * path below the workspace root (`""` otherwise).
 * @throws Error with `code: 'SANDBOX_INVALID_ARGUMENT'` for symlinks leaving a shipped folder,
 *   TypeScript errors, a folder outside `appRoot`, an unparsable `pnpm-workspace.yaml`, a missing
 *   patch file, a `workspace:` dependency with no matching package ("references missing pnpm
 *   workspace dependency …", naming the manifest), a broken module-graph rule (R0022–R0031; R0032: a
 *   reachable bare import of a package package.json does not list in `dependencies`,
 *   `peerDependencies` or `optionalDependencies`, with the install command), or an
 *   imported workspace package whose `exports` / `main` / `./index.js` is TypeScript or not shipped
 *   (R0018 / R0019 / R0020, naming the importing `<file>:<line>:<column>`, the package and the
 *   resolved target: "Build the workspace package to JavaScript before Sandbox execution …";
 *   docs/internals/build-steps.md "TypeScript").
 */
export function readDefinitionDirectory(
  directory: string,
  options?: ReadDefinitionOptions,
): Promise<{ name: string; files: DefinitionFile[]; packagePath: string }>;

/** A Definition found by {@link discoverDefinitions}. Paths are relative to the app root, `/`-separated. */
export interface DiscoveredDefinition {
  /** The Definition name: the folder path below `server/sandboxes`, or the free-form file path without a leading `src/` and the `.sandbox.*` suffix. */
  name: string;
  /** `package`: a folder `server/sandboxes/<name>/`; `free-form`: a `<path>.sandbox.{ts,mts,cts,js,mjs,cjs}` file. */
  kind: 'package' | 'free-form';
  /** The package project directory (`''` = the app root): the folder itself, or the free-form file's nearest folder with a `package.json`. */
  dir: string;
  /** The entry file, e.g. `server/sandboxes/release-notes/index.ts` or `src/content/summary.sandbox.ts`. */
  entry: string;
}

/**
 * Node only: finds the Definitions of an app, sorted by name. Walks `root` (skipping
 * `node_modules/`, `.git/`, `dist/`, `.vite-hub/` and dot-directories): package projects are
 * folders below `server/sandboxes/` with a `package.json` and exactly one of `index.ts`,
 * `index.mts`, `index.js`, `index.mjs` (package folders inside a Definition and pnpm workspace
 * internals are not Definitions; loose files in `server/sandboxes/` are ignored); free-form
 * Definitions are `<path>.sandbox.{ts,mts,cts,js,mjs,cjs}` files elsewhere, whose project is the
 * nearest folder with a `package.json`. Package contents are not validated here (see
 * `readDefinitionDirectory` + `registerSandbox`).
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT`, naming the folder or file, when `root` is not
 *   a directory, a package folder has no entry ("requires one ESM entrypoint …") or several
 *   ("has multiple entrypoints: …"), a free-form file has no `package.json` up to the root, a
 *   derived name is invalid, or two Definitions share a name ("Duplicate sandbox name …").
 */
export function discoverDefinitions(root: string): Promise<DiscoveredDefinition[]>;

/** Node only: `readDefinitionDirectory(directory, options)` + `registerSandbox`; resolves to the registered name (default: the folder name). */
export function registerSandboxDirectory(
  directory: string,
  name?: string,
  options?: ReadDefinitionOptions,
): Promise<string>;

/** The options of {@link warmUp}. */
export interface WarmUpOptions {
  /**
   * Start the host only when the current configuration's Runs go to it (provider `local` without
   * `local.baseUrl`, as `configureSandbox` and the env chose it); otherwise resolve `false` at once,
   * starting nothing. What a server's start-up calls. Default `false`: start it in any case.
   */
  onlyIfUsed?: boolean;
}

/**
 * Node only: starts the in-process local Box host ahead of the first Run (the one every Run on the
 * `local` provider without `local.baseUrl` shares), so that Run's `Server-Timing` has no `host` or
 * `connect` phase. Resolves `true` when the host listens, the first request to it is done and one
 * throwaway Box was opened, written and stopped on it; `false` when `onlyIfUsed` found Runs going
 * elsewhere. Idempotent. The Vite plugin has Nitro call it (`{ onlyIfUsed: true }`) when `vite dev`
 * or a built Node server starts.
 * @throws {SandboxError} `SANDBOX_PROVIDER_UNAVAILABLE` (503) when the host did not start;
 *   `SANDBOX_INVALID_ARGUMENT` (400) for options that are not `undefined` or a plain
 *   `WarmUpOptions` object (an unknown key, an `onlyIfUsed` that is no boolean or cannot be read).
 */
export function warmUp(options?: WarmUpOptions): Promise<boolean>;

/** Node only: closes the warm pools' Boxes (`closeWarmPools()`), then stops the in-process local Box host and every Box it holds. */
export function closeLocalBoxHost(): Promise<void>;

/** A free-form Definition ready for `registerSandbox(prepared.name, prepared)`. */
export interface PreparedFreeFormDefinition extends DefinitionSource {
  /** The discovered name, e.g. `content/summary`. */
  name: string;
  /** Always `.vite-hub-sandbox/definition.mjs`: the bundle, whose default export calls `run`. */
  entry: string;
  /** The `defineSandbox` timeout in ms, when set. */
  timeout?: number;
  /**
   * Whether packages are installed in the Box: with imports of npm packages, a generated
   * `package.json` of only those (pinned to the versions the project's `package-lock.json` /
   * `npm-shrinkwrap.json` / `pnpm-lock.yaml` resolves, else its ranges) plus a `package-lock.json`
   * of their closure from an npm lock; with `project: true`, the nearest project's `package.json`
   * and lockfiles. Else a synthesized `{"type":"module","private":true}`.
   */
  project: boolean;
  /** The npm packages the bundle imports at run time (installed in the Box), sorted. */
  dependencies: string[];
  /** The source files bundled, relative to the app root (what to watch for changes). */
  inputs: string[];
  /** The `defineSandbox` description (its tool description), or `null`. */
  description: string | null;
  /** Whether `defineSandbox({ input })` declares a payload schema (read at generation for the tool's `inputSchema`). */
  input: boolean;
}

/**
 * Node only: prepares one free-form Definition found by {@link discoverDefinitions}. Compiles the
 * file (esbuild), reads its `defineSandbox` options (acorn), bundles it with its local imports
 * into `.vite-hub-sandbox/definition.mjs` (platform node, ESM, target node20; Node built-ins and
 * npm packages stay external; `@vite-hub/sandbox` is replaced by a `defineSandbox` shim), and
 * attaches the nearest project when the bundle imports an npm package or `project: true`.
 * @throws Error with `code: 'SANDBOX_INVALID_ARGUMENT'` and a message starting with
 *   `<file>:<line>:` for a broken rule of {@link defineSandbox}; also for compile/bundle errors,
 *   `project: false` with a runtime dependency ("declares project: false but has a runtime
 *   dependency …"), or an imported package the project's `package.json` does not declare.
 */
export function prepareFreeFormDefinition(
  appRoot: string,
  discovered: DiscoveredDefinition,
): Promise<PreparedFreeFormDefinition>;
