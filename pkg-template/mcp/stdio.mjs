// `vite-hub-sandbox mcp`: the MCP server over stdio (newline-delimited JSON-RPC on stdin/stdout;
// every other line goes to stderr), for desktop clients and coding agents. It discovers the
// Definitions under the app root as `vite-hub-sandbox run <name>` does, registers them, and runs
// them on the provider the environment configures (local by default, as `run`).
//
// Tool list changes: it watches the app root (not recursively), `server/sandboxes/` (recursively)
// and the folder of each free-form Definition file (plus the files these were built from); on a
// change it discovers again and announces `notifications/tools/list_changed` when a Definition was
// added, removed or edited (its digest changed). A free-form file created in a folder that holds
// none yet is seen at the next change of a watched folder.
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Wait after the last file event before discovering again (ms): an editor's save is several events. */
const SETTLE_MS = 200;
/** Path parts whose changes never change a Definition. */
const IGNORED_PARTS = new Set(['node_modules', '.git', '.vite-hub', '.output', '.nitro']);

/**
 * @param {{ root: string, definitions?: string[], commands?: string[], log?: (line: string) => void }} options
 *   `root`: the absolute app root.
 * @returns {Promise<{ close(): Promise<void> }>} resolves once the server listens on stdin/stdout
 */
export async function serveStdio({ root, definitions, commands, log = (line) => process.stderr.write(`${line}\n`) }) {
  // stdout is the protocol: anything a library prints with console.log goes to stderr instead.
  console.log = console.info = console.debug = (...args) => console.error(...args);
  const sandbox = await import('@vite-hub/sandbox');
  const { discoverDefinitionsAndProblems } = await import('../vite/discovery.mjs');
  const { prepareDefinition } = await import('../vite/prepare.mjs');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { createDefinitionServer } = await import('./server.mjs');
  const { setDefinitionToolFacts } = await import('./definition-tools.mjs');
  sandbox.configureSandbox({});

  /** name → digest of what is registered (to tell an edit from a no-op). */
  let registered = new Map();
  /** Folders (absolute) whose changes may change the Definitions. */
  let watched = new Set();
  /** name → tool facts of what is registered (prepareDefinition's `tool.facts`, where it gives them). */
  let facts = {};
  // The tool facts (description, schemas) of what this server registers.
  setDefinitionToolFacts(() => facts);

  const refresh = async () => {
    const { definitions: found, problems } = await discoverDefinitionsAndProblems(root);
    const next = new Map();
    const nextFacts = {};
    const folders = new Set([root, path.join(root, 'server', 'sandboxes')]);
    for (const discovered of found) {
      if (definitions && !definitions.includes(discovered.name)) continue;
      try {
        // With its tool facts (description, schemas) and the warning of an untyped payload.
        const prepared = await prepareDefinition(root, discovered, { tool: true });
        const { definition, inputs } = prepared;
        sandbox.registerSandbox(discovered.name, definition);
        // The untyped-payload warning travels with the facts: listing the tools prints it once
        // per name and text (definition-tools.mjs, on stderr), not at every refresh.
        const { facts: toolFacts, warning } = prepared.tool ?? {};
        if (toolFacts) nextFacts[discovered.name] = warning ? { ...toolFacts, warning } : toolFacts;
        next.set(discovered.name, sandbox.listSandboxes().find((item) => item.name === discovered.name)?.digest);
        if (discovered.kind === 'free-form') folders.add(path.dirname(path.join(root, discovered.entry)));
        for (const input of inputs ?? []) folders.add(path.dirname(path.join(root, input)));
      } catch (error) {
        log(`vite-hub-sandbox mcp: ${error.code ?? 'SANDBOX_INVALID_ARGUMENT'}: ${discovered.dir}: ${error.message}`);
      }
    }
    for (const problem of problems) log(`vite-hub-sandbox mcp: ${problem.code}: ${problem.message}`);
    for (const name of registered.keys()) if (!next.has(name)) sandbox.unregisterSandbox(name);
    for (const name of definitions ?? [])
      if (!next.has(name))
        log(
          `vite-hub-sandbox mcp: --definitions names ${JSON.stringify(name)}, which is not a Definition under ${root}`,
        );
    const changed =
      next.size !== registered.size ||
      [...next].some(([name, digest]) => registered.get(name) !== digest) ||
      JSON.stringify(nextFacts) !== JSON.stringify(facts);
    registered = next;
    facts = nextFacts;
    watched = folders;
    return changed;
  };

  await refresh();
  const version = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')).version;
  // The server lists what is registered: the --definitions filter was applied above.
  const mcp = createDefinitionServer({
    commands,
    serverInfo: { name: '@vite-hub/sandbox', version },
  });

  // The watchers: one per folder, replaced after each discovery.
  const watchers = new Map();
  let timer = null;
  let refreshing = Promise.resolve();
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      refreshing = refreshing.then(async () => {
        try {
          if (await refresh()) await mcp.toolListChanged();
        } catch (error) {
          log(`vite-hub-sandbox mcp: ${error.code ? `${error.code}: ` : ''}${error.message}`);
        }
        syncWatchers();
      });
    }, SETTLE_MS);
  };
  const syncWatchers = () => {
    for (const [folder, watcher] of watchers)
      if (!watched.has(folder)) {
        watcher.close();
        watchers.delete(folder);
      }
    for (const folder of watched) {
      if (watchers.has(folder)) continue;
      const recursive = folder === path.join(root, 'server', 'sandboxes');
      try {
        const watcher = watch(folder, { recursive, persistent: false }, (_event, file) => {
          if (
            file &&
            String(file)
              .split(/[\\/]/)
              .some((part) => IGNORED_PARTS.has(part))
          )
            return;
          schedule();
        });
        watcher.on('error', () => {});
        watchers.set(folder, watcher);
      } catch {
        // A folder that does not exist (yet): the root's watcher sees it created.
      }
    }
  };
  syncWatchers();

  const transport = new StdioServerTransport();
  let closing = null;
  const close = () =>
    (closing ??= (async () => {
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      await mcp.close().catch(() => {});
      await sandbox.closeLocalBoxHost();
    })());
  // The client closes stdin to end the session (spec: stdio "Shutdown"); signals stop it too.
  transport.onclose = () => void close().then(() => process.exit(0));
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void close().then(() => process.exit(0)));
  process.stdin.once('end', () => void close().then(() => process.exit(0)));
  await mcp.server.connect(transport);
  log(
    `vite-hub-sandbox mcp: serving ${registered.size} Definition${registered.size === 1 ? '' : 's'} from ${root}${commands ? ` and sandbox_exec (${commands.join(', ')})` : ''} over stdio`,
  );
  return { close };
}
