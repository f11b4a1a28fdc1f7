// The seam between the tool facts of a Definition (its description, input and output schema) and
// the servers that offer Definitions as tools (the MCP server in ./server.mjs, `definitionTools()`
// of `@vite-hub/sandbox/agent`). Interface (kept stable):
//
//   listDefinitionTools({ definitions? }) → Promise<Array<{ name, description, inputSchema, outputSchema? }>>
//
// `definitions`: the Definition names to offer (default: every Definition the runtime knows: those
// registered with `registerSandbox`, as `vite-hub-sandbox mcp` does, plus the names of the registry
// the Vite plugin's generated facade installs). `inputSchema` is a JSON Schema object with
// `"type": "object"`; `outputSchema`, where present, too.
//
// This first version knows names only: every tool gets `{ type: 'object' }` and one dev warning.
import * as sandboxApi from '@vite-hub/sandbox';

let warned = false;

/**
 * @param {{ definitions?: readonly string[] }} [options]
 * @returns {Promise<Array<{ name: string, description: string, inputSchema: { type: 'object' } & Record<string, unknown>, outputSchema?: { type: 'object' } & Record<string, unknown> }>>}
 */
export async function listDefinitionTools({ definitions } = {}) {
  const names = definitions ? [...definitions] : await knownDefinitionNames();
  if (names.length > 0 && !warned && globalThis.process?.env?.NODE_ENV !== 'production') {
    warned = true;
    console.warn(
      '[sandbox] MCP tools take any JSON object as input: this build has no payload schemas for Definitions yet',
    );
  }
  return names.map((name) => ({
    name,
    description: `Runs the Definition ${JSON.stringify(name)} in a fresh Box and returns its result.`,
    inputSchema: { type: 'object' },
  }));
}

/** Every Definition name the runtime knows: registered ones and the generated registry's (sorted). */
export async function knownDefinitionNames() {
  return (await sandboxApi.describeSandboxRegistry()).names;
}
