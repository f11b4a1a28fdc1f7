#!/usr/bin/env node
// `vite-hub-sandbox`: run a Definition folder on the configured provider and print the Response
// like `curl -i`, start a standalone local Box host, list an app's Definitions, or write their types.
import { parseArgs } from 'node:util';
import { readFileSync, statSync } from 'node:fs';
import path, { resolve } from 'node:path';

const USAGE = `Usage:
  vite-hub-sandbox run <definition-dir | name> [--payload '<json>'] [--context '<json>'] [--app-root <dir>]
      Runs the package project in <definition-dir> (named after the folder), or the Definition
      <name> found under the app root (--app-root, default: the current directory) as the Vite
      plugin finds it (server/sandboxes/<name>/ or a <path>.sandbox.* file), and prints the
      Response: status line, headers, blank line, body. The handler's own output is printed live,
      each line as [<name>] <line> on the stream it wrote on; a thrown error's stack in the
      Response names the Definition's source files. An install over a second prints one line
      on stderr. Exit code 0 for a 2xx Response, 1 otherwise.
  vite-hub-sandbox host [--port <n>] [--isolation auto|bubblewrap|seatbelt|none] [--state-dir <dir>] [--allow-origin <origin>]... [--share-host-network]
      Starts a local Box host on 127.0.0.1 and prints its base URL and bearer token as JSON.
      --share-host-network: with NODE_ENV=production, still create allow-all Boxes where this
      machine gives them no Box network of their own (they then reach its loopback and this
      user's abstract Unix sockets; refused otherwise).
      Its snapshots (the prepared projects of Runs) live under <dir>/snapshots (default
      ~/.cache/vite-hub-sandbox/box-host).
      --allow-origin (repeatable; never * ) lets a browser page of that origin call it (CORS),
      e.g. --allow-origin http://localhost:5173 for a local playground.
  vite-hub-sandbox inspect [<app-root>] [--json]
      Lists the Definitions under <app-root> (default: the current directory): name, path, entry,
      package manager, timeout (ms), DEFINITION DIGEST (of all its files) and INSTALL DIGEST (of
      its install inputs: the key of its prepared project, what dropPreparedProject(digest) takes;
      - without dependencies), as a table or as a JSON array with --json (digest is the Definition
      digest; packagePath, the package below its install root; install, the command
      { command, args, cwd, digest } run at the install root, or null).
      Exit code 1 when discovery or a Definition is invalid.
  vite-hub-sandbox types [<app-root>]
      Writes <app-root>/.vite-hub/sandbox/sandbox.d.ts (the payload and result type of each
      Definition, as vite dev and vite build write it) without starting Vite, e.g. before tsc in CI.
      Exit code 1 when discovery refuses a folder or file (it gets no type; the reason is printed).
  vite-hub-sandbox mcp [--root <dir>] [--definitions <a,b>] [--commands <node,pnpm>]
      Serves the Definitions under the app root (default: the current directory) as MCP tools
      over stdio, for Claude Desktop, Claude Code, Cursor or VS Code (docs/mcp.md): one tool per
      Definition (--definitions: only these), run on the configured provider as run does;
      --commands adds the sandbox_exec tool allowed to run those executables. Logs go to stderr.
  vite-hub-sandbox --version
      Prints the version of @vite-hub/sandbox.`;

/** `SANDBOX_*: ` for our errors; nothing for Node's (their message already names the code). */
function describeCode(error) {
  return typeof error?.code === 'string' && error.code.startsWith('SANDBOX_') ? `${error.code}: ` : '';
}

// `vite-hub-sandbox run … | head -1` closes stdout early: that is not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

function fail(message, code = 2) {
  process.stderr.write(`vite-hub-sandbox: ${message}\n`);
  process.exit(code);
}

function parseJsonOption(name, text) {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(`--${name} is not valid JSON: ${error.message}`);
  }
}

async function printResponse(response) {
  const lines = [`HTTP/1.1 ${response.status} ${response.statusText || ''}`.trimEnd()];
  for (const [name, value] of response.headers) lines.push(`${name}: ${value}`);
  process.stdout.write(`${lines.join('\n')}\n\n`);
  const body = Buffer.from(await response.arrayBuffer());
  process.stdout.write(body);
  if (body.length > 0 && body[body.length - 1] !== 0x0a) process.stdout.write('\n');
}

/** Whether a `run` argument is written as a path (not a Definition name such as `content/summary`). */
const looksLikePath = (text) => path.isAbsolute(text) || /^\.\.?([\\/]|$)/.test(text) || /[\\/]$/.test(text);

/**
 * Finds and prepares the Definition `name` under `root` the way the Vite plugin does (folders
 * under server/sandboxes/ and free-form files); `null` when discovery has no such name.
 * @returns {Promise<{ definition?: object, sources?: object, names?: string[], problems?: { name: string, code: string, message: string }[] }>}
 */
async function prepareByName(root, name) {
  const { discoverDefinitionsAndProblems } = await import('./vite/discovery.mjs');
  const { prepareDefinition } = await import('./vite/prepare.mjs');
  let discovery;
  try {
    discovery = await discoverDefinitionsAndProblems(root);
  } catch (error) {
    fail(`${describeCode(error)}${error.message}`, 1);
  }
  const discovered = discovery.definitions.find((item) => item.name === name);
  if (!discovered) {
    const problem = discovery.problems.find((item) => item.name === name);
    if (problem) fail(`${problem.code}: ${problem.message}`, 1);
    return { names: discovery.definitions.map((item) => item.name), problems: discovery.problems };
  }
  try {
    const { definition, sources } = await prepareDefinition(root, discovered);
    return { definition, sources };
  } catch (error) {
    const where = discovered.kind === 'free-form' ? '' : `${discovered.dir}: `;
    fail(`${describeCode(error)}${where}${error.message}`, 1);
  }
}

async function run(args) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { payload: { type: 'string' }, context: { type: 'string' }, 'app-root': { type: 'string' } },
  });
  if (positionals.length !== 1) fail(`run takes one <definition-dir> or <name>\n${USAGE}`);
  const [target] = positionals;
  // With --app-root, a pnpm workspace above the Definition (up to that root) joins it, as in the
  // Vite plugin; a name is looked up under it (default: the current directory).
  const options = values['app-root'] === undefined ? {} : { appRoot: resolve(values['app-root']) };
  if (options.appRoot !== undefined && !statSync(options.appRoot, { throwIfNoEntry: false })?.isDirectory()) {
    fail(`--app-root ${JSON.stringify(values['app-root'])} is not a directory`);
  }
  const folder = statSync(resolve(target), { throwIfNoEntry: false });
  if (!folder && looksLikePath(target))
    fail(
      `${JSON.stringify(target)} does not exist: give the Definition's folder (e.g. server/sandboxes/<name>) or its name`,
    );
  if (folder && !folder.isDirectory())
    fail(
      `${JSON.stringify(target)} is not a folder: give the Definition's folder (e.g. server/sandboxes/<name>), not its entry file, or its name`,
    );
  const payload = parseJsonOption('payload', values.payload);
  const context = parseJsonOption('context', values.context);
  const sandbox = await import('@vite-hub/sandbox');
  // The handler's own output, live: `[<name>] <line>` on the stream it used; a thrown error's
  // stack kept (debug) and mapped to the Definition's sources below.
  sandbox.configureSandbox({
    debug: true,
    onLog: ({ name: from, stream, line }) =>
      (stream === 'stderr' ? process.stderr : process.stdout).write(`[${from}] ${line}\n`),
  });
  let name;
  let definition;
  /** How a stack maps back to the Definition's sources (vite/source-stack.mjs), paths relative to the app root or the current directory. */
  let sources = null;
  if (folder) {
    try {
      const { readDefinitionProject } = await import('./vite/definition-directory.mjs');
      const { stackSources } = await import('./vite/source-stack.mjs');
      const read = await readDefinitionProject(resolve(target), options);
      definition = { files: read.files, packagePath: read.packagePath };
      name = read.name;
      sources = stackSources(read, options.appRoot ?? process.cwd());
      sandbox.registerSandbox(name, definition);
    } catch (error) {
      fail(`${describeCode(error)}${error.message}`, 1);
    }
  } else {
    // A Definition name, discovered from the app root like the plugin does (free-form included).
    const found = await prepareByName(options.appRoot ?? process.cwd(), target);
    name = target;
    if (found.definition) {
      definition = found.definition;
      sources = found.sources;
      sandbox.registerSandbox(name, definition);
    } else {
      // Unknown: the core's SANDBOX_NOT_FOUND proposes the closest names and lists the others.
      const invalid = Object.fromEntries(
        found.problems.filter((p) => p.name !== null).map((p) => [p.name, `${p.code}: ${p.message}`]),
      );
      sandbox.setSandboxDefinitionLoader(
        async () => undefined,
        () => ({ names: found.names, invalid }),
      );
    }
  }
  // Ctrl-C or a kill during the run: stop the Box host (every Box, its processes and its
  // directory) before exiting with the conventional 128 + signal code.
  const controller = new AbortController();
  for (const [signal, code] of /** @type {[NodeJS.Signals, number][]} */ ([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])) {
    process.once(signal, () => {
      controller.abort(new Error(`interrupted by ${signal}`));
      sandbox.closeLocalBoxHost().finally(() => process.exit(code));
    });
  }
  try {
    const run = sandbox.startSandbox(name, payload, {
      signal: controller.signal,
      ...(context === undefined ? {} : { context }),
    });
    let response = await run.response();
    // A handler error's stack, mapped to the Definition's own source files.
    if (sources) {
      const { mapSandboxStack, withMappedStack } = await import('./vite/source-stack.mjs');
      const traceMapping = await import('@jridgewell/trace-mapping');
      response = await withMappedStack(response, (stack) => mapSandboxStack(stack, sources, traceMapping));
    }
    // An install over a second: one line on stderr (manager, package count, duration).
    if (definition) {
      const { installFacts, installNotice } = await import('./vite/install-notice.mjs');
      const summary = sandbox.listSandboxes().find((item) => item.name === name);
      const notice = installNotice(name, response, installFacts(definition, summary));
      if (notice) process.stderr.write(`vite-hub-sandbox: ${notice.replace(/^\[sandbox\] /, '')}\n`);
    }
    await printResponse(response);
    process.exitCode = response.ok ? 0 : 1;
    // The Box is given back after the Response; the first Run of a project with dependencies
    // keeps it as the prepared project then. Wait for that before the host stops (a failure there
    // was already reported on stderr and does not change the exit code).
    await run.closed().catch(() => {});
  } catch (error) {
    // Interrupted: the signal handler is stopping the host and will exit with 128 + signal.
    if (controller.signal.aborted) return new Promise(() => {});
    throw error;
  } finally {
    await sandbox.closeLocalBoxHost();
  }
}

async function host(args) {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      isolation: { type: 'string' },
      'state-dir': { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'share-host-network': { type: 'boolean' },
    },
  });
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('--port must be an integer 0-65535');
  const { startBoxHost } = await import('@vite-hub/sandbox/box-host');
  const allowOrigins = values['allow-origin'];
  const stateDir = values['state-dir'] === undefined ? undefined : resolve(values['state-dir']);
  let started;
  try {
    started = await startBoxHost({
      port,
      isolation: /** @type {'auto' | 'bubblewrap' | 'seatbelt' | 'none'} */ (values.isolation ?? 'auto'),
      stateDir,
      shareHostNetwork: values['share-host-network'] === true,
      ...(allowOrigins ? { allowOrigins } : {}),
    });
  } catch (error) {
    // A bad --allow-origin is a usage error.
    if (error instanceof TypeError && /allowOrigins/.test(error.message))
      fail(error.message.replace('allowOrigins: ', '--allow-origin '));
    throw error;
  }
  process.stdout.write(
    `${JSON.stringify({ baseUrl: started.baseUrl, token: started.token, executionAuthority: started.executionAuthority })}\n`,
  );
  process.stderr.write(`${started.description}\n`);
  const stop = () => started.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * One row of `inspect`: discovery + the validated Definition (a package folder as read, a
 * free-form file as prepared: bundled, with its project attached when needed). A Definition that
 * fails validation gets `error: { code, message }` (the message names the folder or file:line).
 */
async function inspectDefinition(sandbox, root, definition) {
  const row = {
    name: definition.name,
    kind: definition.kind,
    path: definition.dir,
    entry: definition.entry,
    packageManager: null,
    timeoutMs: null,
    digest: null,
    packagePath: null,
    install: null,
  };
  try {
    const { prepareDefinition } = await import('./vite/prepare.mjs');
    sandbox.registerSandbox(definition.name, (await prepareDefinition(root, definition)).definition);
  } catch (error) {
    // Free-form messages already start with <file>:<line>.
    const where = definition.kind === 'free-form' ? '' : `${definition.dir}: `;
    return { ...row, error: { code: error.code ?? 'SANDBOX_INVALID_ARGUMENT', message: `${where}${error.message}` } };
  }
  const registered = sandbox.listSandboxes().find((item) => item.name === definition.name);
  sandbox.unregisterSandbox(definition.name);
  const { packageManager, timeoutMs, digest, packagePath, install } = registered;
  return { ...row, packageManager, timeoutMs, digest, packagePath, install };
}

function printTable(rows) {
  // Two digests, each named: the Definition's (all its files) and its install's (the prepared
  // project's key, which dropPreparedProject takes).
  const header = ['NAME', 'PATH', 'ENTRY', 'PACKAGE MANAGER', 'TIMEOUT MS', 'DEFINITION DIGEST', 'INSTALL DIGEST'];
  const cells = rows.map((row) =>
    [
      row.name ?? '?',
      row.path === null ? '-' : row.path || '.',
      row.entry ?? '-',
      row.packageManager ?? '-',
      row.timeoutMs ?? '-',
      row.digest ?? '-',
      row.install?.digest ?? '-',
    ].map(String),
  );
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column].length)));
  const format = (line) =>
    line
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[header, ...cells].map(format).join('\n')}\n`);
}

/** The <app-root> argument as an absolute path (default: the current directory); a usage error (2) unless a directory. */
function appRootArgument(given = '.') {
  const root = resolve(given);
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory())
    fail(`${JSON.stringify(given)} is not a directory: give the app root (the folder holding vite.config.*)`);
  return root;
}

async function inspect(args) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  if (positionals.length > 1) fail(`inspect takes at most one <app-root>\n${USAGE}`);
  const root = appRootArgument(positionals[0]);
  const sandbox = await import('@vite-hub/sandbox');
  const { discoverDefinitionsAndProblems } = await import('./vite/discovery.mjs');
  let discovery;
  try {
    discovery = await discoverDefinitionsAndProblems(root);
  } catch (error) {
    fail(`${describeCode(error)}${error.message}`, 1);
  }
  /** @type {({ name: string, error?: { code: string, message: string } } & Record<string, any>)[]} */
  const rows = [];
  for (const definition of discovery.definitions) rows.push(await inspectDefinition(sandbox, root, definition));
  // Folders and files discovery refused (no entry, several, a duplicated or invalid name): listed with their error.
  for (const { name, origin, code, message } of discovery.problems) {
    rows.push({
      name,
      kind: null,
      path: origin,
      entry: null,
      packageManager: null,
      timeoutMs: null,
      digest: null,
      packagePath: null,
      install: null,
      error: { code, message },
    });
  }
  if (values.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else if (rows.length === 0) process.stdout.write(`No Definitions under ${root}.\n`);
  else printTable(rows);
  // Every invalid Definition is reported (not only the first); any makes the exit code 1.
  const invalid = rows.filter((row) => row.error);
  for (const { error } of invalid) process.stderr.write(`vite-hub-sandbox: ${error.code}: ${error.message}\n`);
  if (invalid.length) process.exitCode = 1;
}

async function types(args) {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length > 1) fail(`types takes at most one <app-root>\n${USAGE}`);
  const root = appRootArgument(positionals[0]);
  const { generateSandboxTypes } = await import('./vite/generate.mjs');
  let result;
  try {
    result = await generateSandboxTypes(root);
  } catch (error) {
    fail(`${describeCode(error)}${error.message}`, 1);
  }
  const count = result.names.length;
  process.stdout.write(
    `${result.changed ? 'Wrote' : 'Up to date:'} ${result.file} (${count} Definition${count === 1 ? '' : 's'}${count ? `: ${result.names.join(', ')}` : ''})\n`,
  );
  for (const { code, message } of result.problems) process.stderr.write(`vite-hub-sandbox: ${code}: ${message}\n`);
  if (result.problems.length) process.exitCode = 1;
}

async function mcp(args) {
  const { values } = parseArgs({
    args,
    options: { root: { type: 'string' }, definitions: { type: 'string' }, commands: { type: 'string' } },
  });
  const list = (text) =>
    text === undefined
      ? undefined
      : text
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean);
  const root = appRootArgument(values.root);
  // The official MCP SDK is an optional peer dependency: only an app that serves MCP installs it.
  const sdkMissing = (error) =>
    error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('@modelcontextprotocol/sdk');
  try {
    const { serveStdio } = await import('./mcp/stdio.mjs');
    await serveStdio({ root, definitions: list(values.definitions), commands: list(values.commands) });
  } catch (error) {
    if (sdkMissing(error))
      fail(
        'SANDBOX_NOT_SUPPORTED: vite-hub-sandbox mcp needs the official MCP SDK in the app: npm i @modelcontextprotocol/sdk',
        1,
      );
    fail(`${describeCode(error)}${error.message}`, 1);
  }
}

const [command, ...rest] = process.argv.slice(2);
try {
  // `<command> --help` (or -h) is the usage, as the bare --help is, not an unknown option.
  if (rest.includes('--help') || rest.includes('-h')) process.stdout.write(`${USAGE}\n`);
  else if (command === 'run') await run(rest);
  else if (command === 'host') await host(rest);
  else if (command === 'inspect') await inspect(rest);
  else if (command === 'types') await types(rest);
  else if (command === 'mcp') await mcp(rest);
  else if (command === '--help' || command === 'help') process.stdout.write(`${USAGE}\n`);
  else if (command === '--version' || command === '-v')
    process.stdout.write(`${JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version}\n`);
  else if (command === undefined) fail(`a command is required\n${USAGE}`);
  else fail(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
} catch (error) {
  // Exit code 2 for a usage error (bad option), 1 for a failure (e.g. the port is taken).
  fail(error.message, String(error.code).startsWith('ERR_PARSE_ARGS') ? 2 : 1);
}
