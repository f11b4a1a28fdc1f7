// Prepares a free-form Definition (`<path>.sandbox.{ts,mts,cts,js,mjs,cjs}` default-exporting
// `defineSandbox({ run, ... })`) for registerSandbox (Node only). JS reads facts with the app's
// Vite (app-vite.mjs: it compiles and parses; its `build()` bundles); every rule is in
// crates/core/src/definition/sandbox_options.rs.
// Contract: docs/internals/build-steps.md, "Free-form Definitions".
import fs from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { analyze } from 'eslint-scope';
import { parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import { parse as parseYaml } from 'yaml';
import * as wasm from './tooling-wasm.mjs';
import { BOX_NODE_TARGET } from './box-target.mjs';
import { appVite, parseModule, transformModule } from './app-vite.mjs';
import { invalidArgument, transformProblem } from './sandbox-error.mjs';

/** Where the bundle goes, relative to the shipped package directory. */
export const FREE_FORM_ENTRY = '.vite-hub-sandbox/definition.mjs';

/** The package whose `defineSandbox` import is replaced by the shim in the bundle. */
const SANDBOX_PACKAGE = '@vite-hub/sandbox';
/** The bundle's id of the shim (`\0`: virtual, no file, and out of the source map). */
const SHIM_ID = '\0vite-hub-sandbox-shim';
const SHIM_SOURCE = 'export const defineSandbox = (definition) => definition;\n';
/**
 * The name the generated entry has in the bundle's source map (not a source file). Its id is this
 * name in the root: an id with `\0` would leave it out of the map (rollup, rolldown).
 */
const ENTRY_SOURCEFILE = '<vite-hub-sandbox entry>';
/** The bundle's file name (never written). */
const BUNDLE_NAME = '.vite-hub-sandbox-bundle.mjs';
/** Package manifest shipped when the nearest project is not attached. */
const DETACHED_MANIFEST = '{"type":"module","private":true}\n';

const NOT_STATIC = Symbol('not static');

/** The JSON value of a literal-only expression, or NOT_STATIC. */
function staticValue(node) {
  switch (node?.type) {
    case 'Literal':
      if (node.regex || node.bigint !== undefined) return NOT_STATIC;
      if (typeof node.value === 'number' && !Number.isFinite(node.value)) return NOT_STATIC;
      return node.value;
    case 'UnaryExpression':
      if (
        (node.operator === '-' || node.operator === '+') &&
        node.argument.type === 'Literal' &&
        typeof node.argument.value === 'number'
      ) {
        return node.operator === '-' ? -node.argument.value : node.argument.value;
      }
      return NOT_STATIC;
    case 'TemplateLiteral':
      return node.expressions.length === 0 ? node.quasis[0].value.cooked : NOT_STATIC;
    case 'ArrayExpression': {
      const values = node.elements.map((element) =>
        element === null || element.type === 'SpreadElement' ? NOT_STATIC : staticValue(element),
      );
      return values.includes(NOT_STATIC) ? NOT_STATIC : values;
    }
    case 'ObjectExpression': {
      const object = {};
      for (const property of node.properties) {
        if (property.type !== 'Property' || property.computed || property.kind !== 'init' || property.method)
          return NOT_STATIC;
        const key = propertyKey(property);
        const value = staticValue(property.value);
        if (key === null || value === NOT_STATIC) return NOT_STATIC;
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    default:
      return NOT_STATIC;
  }
}

function propertyKey(property) {
  if (property.computed) return null;
  if (property.key.type === 'Identifier') return property.key.name;
  if (property.key.type === 'Literal') return String(property.key.value);
  return null;
}

function isFunction(property) {
  return (
    property.method ||
    property.kind !== 'init' ||
    ['FunctionExpression', 'ArrowFunctionExpression'].includes(property.value?.type)
  );
}

/**
 * Reads what crates/core/src/definition/sandbox_options.rs needs from one free-form source file: the default
 * export, the callee of its call (as imported from @vite-hub/sandbox), its arguments and the
 * properties of an object literal argument, with their lines in the *source* (TypeScript is
 * compiled by the app's Vite; positions go back through its source map).
 * @param {string} source the file's text
 * @param {string} file its path relative to the app root (named in messages)
 * @returns {Promise<object>} `SandboxFileFacts` (see the Rust docs)
 */
export async function readSandboxFacts(source, file) {
  const purpose = `Preparing ${file}`;
  let compiled;
  try {
    compiled = await transformModule(source, file, {
      lang: /\.[mc]?ts$/.test(file) ? 'ts' : 'js',
      target: 'esnext',
      purpose,
    });
  } catch (error) {
    if (error?.name === 'SandboxError') throw error;
    throw invalidArgument(`Cannot compile ${transformProblem(error, file)}`, error);
  }
  let program;
  try {
    program = await parseModule(compiled.code, purpose);
  } catch (error) {
    if (error?.name === 'SandboxError') throw error;
    throw invalidArgument(`Cannot parse ${file}: ${error.message}`, error);
  }
  const trace = new TraceMap(compiled.map);
  const position = (node) => {
    const original = originalPositionFor(trace, { line: node.loc.start.line, column: node.loc.start.column });
    return original.line === null
      ? { line: node.loc.start.line, column: node.loc.start.column + 1 }
      : { line: original.line, column: original.column + 1 };
  };

  // Local names bound by imports: local -> imported name (`defineSandbox`) when imported from
  // @vite-hub/sandbox, or null when imported from anywhere else.
  const imports = new Map();
  const bindings = new Map();
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration') {
      for (const specifier of statement.specifiers) {
        const imported =
          specifier.type === 'ImportSpecifier' ? (specifier.imported.name ?? specifier.imported.value) : null;
        imports.set(specifier.local.name, statement.source.value === SANDBOX_PACKAGE ? imported : null);
      }
    }
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type === 'VariableDeclaration') {
      for (const declarator of declaration.declarations) {
        if (declarator.id.type === 'Identifier') bindings.set(declarator.id.name, declarator.init);
      }
    }
  }
  const calleeName = (call) => {
    if (call?.type !== 'CallExpression' || call.callee.type !== 'Identifier') return null;
    const name = call.callee.name;
    return imports.has(name) ? imports.get(name) : name;
  };

  let defaultExport = null;
  for (const statement of program.body) {
    if (statement.type === 'ExportDefaultDeclaration') {
      defaultExport = describeExport(statement.declaration, statement);
    } else if (statement.type === 'ExportNamedDeclaration' && statement.source === null) {
      const specifier = statement.specifiers.find((s) => (s.exported.name ?? s.exported.value) === 'default');
      if (specifier)
        defaultExport = {
          line: position(statement).line,
          kind: 'binding',
          binding: specifier.local.name,
          bindingCallee: calleeName(bindings.get(specifier.local.name)),
        };
    } else if (statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportAllDeclaration') {
      const reexport = statement.specifiers?.find((s) => (s.exported.name ?? s.exported.value) === 'default');
      if (reexport) defaultExport = { line: position(statement).line, kind: 'other' };
    }
  }

  function describeExport(expression, statement) {
    const { line } = position(statement);
    if (expression.type === 'Identifier') {
      return {
        line,
        kind: 'binding',
        binding: expression.name,
        bindingCallee: calleeName(bindings.get(expression.name)),
      };
    }
    if (expression.type !== 'CallExpression') return { line, kind: 'other' };
    return {
      line,
      kind: 'call',
      callee: calleeName(expression),
      arguments: expression.arguments.map((argument) => ({
        line: position(argument).line,
        kind: argument.type === 'ObjectExpression' ? 'object' : argument.type === 'SpreadElement' ? 'spread' : 'other',
        properties: argument.type === 'ObjectExpression' ? argument.properties.map(describeProperty) : [],
      })),
    };
  }

  function describeProperty(property) {
    const { line, column } = position(property);
    if (property.type === 'SpreadElement') return { key: null, line, column, spread: true, static: false };
    const value = isFunction(property) ? NOT_STATIC : staticValue(property.value);
    const facts = {
      key: propertyKey(property),
      line,
      column,
      function: isFunction(property),
      static: value !== NOT_STATIC,
    };
    if (value !== NOT_STATIC) facts.value = value;
    return facts;
  }

  return { file, defaultExport };
}

/**
 * Bundles a free-form file into one ESM module whose default export calls its `run`, with the
 * app's Vite (`build()`, SSR, for the Box's Node: box-target.mjs on Vite 7; syntax as written on
 * Vite 8, see app-vite.mjs). `@vite-hub/sandbox` becomes a shim exporting `defineSandbox` (also
 * added to a module that calls it without importing it); Node built-ins and bare package imports
 * stay external (the latter are returned). Dynamic imports are inlined: one module.
 * @returns {Promise<{ code: Uint8Array, map: object, externalSpecifiers: string[], inputs: string[] }>}
 *   `map`: the bundle's source map, its `sources` relative to `root`.
 *   `inputs`: the source files read, relative to `root`, `/`-separated.
 */
async function bundleFreeForm(root, file) {
  const absolute = path.join(root, file);
  const entryId = path.join(root, ENTRY_SOURCEFILE);
  const external = new Set();
  const inputs = new Set();
  const vite = await appVite(`Bundling ${file}`);
  const esbuildMajor = typeof vite.transformWithOxc !== 'function';
  // A broken package.json next to a bundled module: its own message (Vite would not read it).
  let manifestProblem = null;
  const manifests = new Map();
  const checkManifest = async (id) => {
    for (let dir = path.dirname(id); dir === root || dir.startsWith(`${root}${path.sep}`); dir = path.dirname(dir)) {
      const manifest = path.join(dir, 'package.json');
      if (!manifests.has(manifest))
        manifests.set(manifest, await fs.readFile(manifest, 'utf8').then(jsonProblem, () => undefined));
      const problem = manifests.get(manifest);
      if (problem === undefined) continue;
      if (problem !== null) {
        manifestProblem ??= `${path.relative(root, manifest).split(path.sep).join('/')}:${problem}`;
        throw new Error(manifestProblem);
      }
      return;
    }
  };
  const resolving = {
    name: 'vite-hub-sandbox-free-form',
    enforce: 'pre',
    resolveId(source) {
      if (source === entryId || source === SANDBOX_PACKAGE) return source === entryId ? entryId : SHIM_ID;
      if (source.startsWith('\0') || path.isAbsolute(source) || !/^[^./]/.test(source)) return null;
      if (!isBuiltin(source)) external.add(source);
      return { id: source, external: true };
    },
    async load(id) {
      if (id === entryId) {
        // Line for line its own source, named ENTRY_SOURCEFILE, so a stack through it maps too.
        // `input`: the declared payload schema, read on the host at generation (vite/tool-facts.mjs).
        const code = `import definition from ${JSON.stringify(absolute)};\nexport default (payload, context) => definition.run(payload, context);\nexport const input = definition.input;\n`;
        return { code, map: { version: 3, sources: [ENTRY_SOURCEFILE], names: [], mappings: 'AAAA;AACA;AACA' } };
      }
      if (id === SHIM_ID) return SHIM_SOURCE;
      if (path.isAbsolute(id)) {
        await checkManifest(id.split('?')[0]);
        inputs.add(path.relative(root, id.split('?')[0]).split(path.sep).join('/'));
      }
      return null;
    },
  };
  // A module that calls defineSandbox without importing it (auto-import style) gets the shim: the
  // import goes at the end (imports hoist), so no position moves and the source map stays.
  const autoImport = {
    name: 'vite-hub-sandbox-auto-import',
    enforce: 'post',
    async transform(code, id) {
      if (id.startsWith('\0') || !code.includes('defineSandbox')) return null;
      const scopes = analyze(await parseModule(code, `Bundling ${file}`), { ecmaVersion: 2022, sourceType: 'module' });
      if (!scopes.globalScope.through.some((reference) => reference.identifier.name === 'defineSandbox')) return null;
      return { code: `${code}\nimport { defineSandbox } from ${JSON.stringify(SANDBOX_PACKAGE)};\n`, map: null };
    },
  };
  let output;
  // Vite's build sets process.env.NODE_ENV to 'production' when it is unset: in the app's own
  // process (the CLI, vite dev, a server reading a folder) that would make it a production process
  // (no implicit local provider) for everything after. It is put back as it was.
  const nodeEnv = process.env.NODE_ENV;
  try {
    const built = await vite.build({
      configFile: false,
      root,
      mode: 'production',
      logLevel: 'silent',
      clearScreen: false,
      publicDir: false,
      plugins: [resolving, autoImport],
      // Vite 7 lowers the chunk with esbuild for `build.target`: keep import attributes (box-target.mjs).
      ...(esbuildMajor ? { esbuild: { supported: BOX_NODE_TARGET.supported } } : {}),
      build: {
        ssr: true,
        write: false,
        outDir: root,
        emptyOutDir: false,
        copyPublicDir: false,
        reportCompressedSize: false,
        minify: false,
        target: esbuildMajor ? BOX_NODE_TARGET.target : 'esnext',
        // The source map stays on the host (stacks in dev and the CLI, source-stack.mjs): no
        // comment in the code, no sources' text; its sources are relative to the root.
        sourcemap: 'hidden',
        rollupOptions: {
          input: entryId,
          // One module: dynamic imports inlined (rolldown's name for it on Vite 8 is `codeSplitting: false`).
          output: {
            format: 'es',
            entryFileNames: BUNDLE_NAME,
            sourcemapExcludeSources: true,
            ...(esbuildMajor ? { inlineDynamicImports: true } : { codeSplitting: false }),
          },
        },
      },
    });
    output = (Array.isArray(built) ? built[0] : built).output.find((item) => item.type === 'chunk' && item.isEntry);
  } catch (error) {
    if (error?.name === 'SandboxError') throw error;
    // A problem in another file (an imported module, the app's package.json) still names this
    // Definition's file first: every free-form Definition of an app bundles with that file.
    const problem = manifestProblem ?? transformProblem(error, file, root);
    throw invalidArgument(
      problem.startsWith(`${file}:`) ? `Cannot bundle ${problem}` : `Cannot bundle ${file}: ${problem}`,
      error,
    );
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  const map = typeof output.map?.toString === 'function' ? JSON.parse(output.map.toString()) : { ...output.map };
  map.sources = map.sources.map((source) =>
    source.endsWith(ENTRY_SOURCEFILE)
      ? ENTRY_SOURCEFILE
      : path.relative(root, path.resolve(root, source)).split(path.sep).join('/'),
  );
  delete map.sourcesContent;
  map.file = BUNDLE_NAME;
  return {
    code: new TextEncoder().encode(output.code),
    map,
    externalSpecifiers: [...external].sort(),
    inputs: [...inputs].sort(),
  };
}

/** `null` when `text` is JSON, else `line:column: problem` of its first error. */
function jsonProblem(text) {
  const errors = [];
  parseJsonc(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (errors.length === 0) return null;
  const before = text.slice(0, errors[0].offset).split('\n');
  return `${before.length}:${before.at(-1).length + 1}: invalid JSON (${printParseErrorCode(errors[0].error)})`;
}

/**
 * The project's lockfile facts for the Box project: `npmLock: [name, text]`
 * (`npm-shrinkwrap.json`, else `package-lock.json`) and `pnpmLock` (`pnpm-lock.yaml` parsed).
 * @param {string} projectDir absolute project directory
 * @param {string} dir the same, relative to the app root (for messages)
 */
async function readAppLocks(projectDir, dir) {
  const read = (name) =>
    fs
      .readFile(path.join(projectDir, name), 'utf8')
      .catch((error) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
  const locks = {};
  for (const name of ['npm-shrinkwrap.json', 'package-lock.json']) {
    const text = await read(name);
    if (text !== null) {
      locks.npmLock = [name, text];
      break;
    }
  }
  const pnpm = locks.npmLock ? null : await read('pnpm-lock.yaml');
  if (pnpm !== null) {
    try {
      locks.pnpmLock = parseYaml(pnpm);
    } catch (error) {
      throw invalidArgument(
        `${dir ? `${dir}/` : ''}pnpm-lock.yaml is not valid YAML: ${error.message}; fix or regenerate it (pnpm install).`,
        error,
      );
    }
  }
  return locks;
}

/**
 * Prepares a discovered free-form Definition for `registerSandbox(name, definition)`.
 *
 * Checks its `defineSandbox({ run, timeout?, project? })` options, bundles it to
 * `.vite-hub-sandbox/definition.mjs`, and ships: when it imports runtime packages, a generated
 * `package.json` of only those packages at the versions the project's lockfile resolves (and a
 * `package-lock.json` of their closure from an npm lock), never the whole manifest; with
 * `project: true`, the nearest project's `package.json` and lockfiles; else a synthesized
 * `{"type":"module","private":true}`.
 * @param {string} appRoot the app root `discovered` is relative to
 * @param {{ name: string, kind: 'free-form', dir: string, entry: string }} discovered one item of `discoverDefinitions(appRoot)`
 * @returns {Promise<{ name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, entry: string, timeout?: number, project: boolean, dependencies: string[], inputs: string[], sourceMap: object, description: string | null, input: boolean }>}
 *   `timeout` in ms (absent: the project's manifest or the default applies); `project`: whether
 *   the project files ship; `dependencies`: the packages installed in the Box; `inputs`: the
 *   source files bundled, relative to `appRoot` (what to watch); `sourceMap`: the bundle's source
 *   map, `sources` relative to `appRoot` (host side only, never shipped: for mapping stacks).
 * @throws {Error} `code: 'SANDBOX_INVALID_ARGUMENT'`, naming file and line, for a rule of
 *   crates/core/src/definition/sandbox_options.rs, a compile/bundle error, or a missing project manifest.
 */
export async function prepareFreeFormDefinition(appRoot, discovered) {
  if (discovered?.kind !== 'free-form') {
    throw invalidArgument(
      `prepareFreeFormDefinition expects a free-form Definition from discoverDefinitions, got kind ${JSON.stringify(discovered?.kind)}.`,
    );
  }
  const root = path.resolve(appRoot);
  const file = discovered.entry;
  let source;
  try {
    source = await fs.readFile(path.join(root, file), 'utf8');
  } catch (error) {
    throw invalidArgument(`Cannot read free-form Definition ${file}: ${error.message}`, error);
  }
  const factsJson = JSON.stringify(await readSandboxFacts(source, file));
  const options = wasm.checkSandboxOptions(factsJson);
  const bundle = await bundleFreeForm(root, file);

  const projectDir = path.join(root, discovered.dir);
  const manifest = discovered.dir ? `${discovered.dir}/package.json` : 'package.json';
  const manifestJson = await fs.readFile(path.join(projectDir, 'package.json'), 'utf8').catch((error) => {
    throw invalidArgument(`Cannot read ${manifest}, the project of ${file}: ${error.message}`, error);
  });
  const request = { manifest, manifestJson, externalSpecifiers: bundle.externalSpecifiers };
  if (bundle.externalSpecifiers.length) Object.assign(request, await readAppLocks(projectDir, discovered.dir));
  const plan = wasm.planFreeFormProject(factsJson, JSON.stringify(request));

  const files = [];
  if (plan.generated.length) {
    // Only the imported packages, pinned to the app's lockfile (crates/core/src/definition/box_project.rs).
    for (const { path: name, text } of plan.generated)
      files.push({ path: name, content: new TextEncoder().encode(text) });
  } else if (plan.attach) {
    for (const name of plan.files) {
      const content = await fs
        .readFile(path.join(projectDir, name))
        .catch((error) => (error.code === 'ENOENT' ? null : Promise.reject(error)));
      if (content !== null) files.push({ path: name, content: new Uint8Array(content) });
    }
  } else {
    files.push({ path: 'package.json', content: new TextEncoder().encode(DETACHED_MANIFEST) });
  }
  files.push({ path: FREE_FORM_ENTRY, content: bundle.code });
  const prepared = {
    name: discovered.name,
    files,
    entry: FREE_FORM_ENTRY,
    project: plan.attach,
    dependencies: plan.dependencies,
    inputs: bundle.inputs,
    sourceMap: bundle.map,
    description: options.description,
    input: options.input,
  };
  if (options.timeout !== null) prepared.timeout = options.timeout;
  return prepared;
}
