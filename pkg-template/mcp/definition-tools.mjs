// The seam between the tool facts of a Definition (its description, input and output schema) and
// the servers that offer Definitions as tools (the MCP server in ./server.mjs, `definitionTools()`
// of `@vite-hub/sandbox/agent`). Interface (kept stable):
//
//   listDefinitionTools({ definitions? }) → Promise<Array<{ name, description, inputSchema, outputSchema? }>>
//   setDefinitionToolFacts(source | null): where the facts come from, `source()` giving
//     `{ "<name>": { description?, inputSchema?, outputSchema? } }` (`vite-hub-sandbox mcp`: what it
//     prepared; an app route: the generated registry's, handed over by the Vite plugin's shim)
//
// `definitions`: the Definition names to offer (default: every Definition the runtime knows: the
// facts' names, those registered with `registerSandbox`, and the generated registry's).
// `inputSchema` is a JSON Schema object with `"type": "object"`; `outputSchema`, where present, too.
//
// This first version takes the facts it is given; without any, every tool gets `{ type: 'object' }`
// and one dev warning.
import * as sandboxApi from '@vite-hub/sandbox';
import { sandboxError } from '../runtime/sandbox-error.mjs';

const UNTYPED = Object.freeze({ type: 'object' });
let warned = false;
/** @type {(() => Record<string, { description?: string, inputSchema?: object, outputSchema?: object }> | Promise<Record<string, object>>) | null} */
let factsSource = null;

/**
 * Replaces where tool facts are read (`null`: none).
 * @param {(() => Record<string, object> | Promise<Record<string, object>>) | null} source
 */
export function setDefinitionToolFacts(source) {
  if (source !== null && typeof source !== 'function')
    throw sandboxError('SANDBOX_INVALID_ARGUMENT', 'setDefinitionToolFacts(source): source must be a function or null');
  factsSource = source;
}

/**
 * @param {{ definitions?: readonly string[] }} [options]
 * @returns {Promise<Array<{ name: string, description: string, inputSchema: { type: 'object' } & Record<string, unknown>, outputSchema?: { type: 'object' } & Record<string, unknown> }>>}
 */
export async function listDefinitionTools({ definitions } = {}) {
  const facts = /** @type {Record<string, any>} */ ((factsSource ? await factsSource() : null) ?? {});
  const names = definitions ? [...definitions] : await knownDefinitionNames(Object.keys(facts));
  if (
    names.some((name) => !facts[name]?.inputSchema) &&
    !warned &&
    globalThis.process?.env?.NODE_ENV !== 'production'
  ) {
    warned = true;
    console.warn('[sandbox] some MCP tools take any JSON object as input: their Definitions have no payload schema');
  }
  return names.map((name) => {
    const tool = {
      name,
      description: facts[name]?.description ?? `Runs the Sandbox Definition "${name}".`,
      inputSchema: structuredClone(facts[name]?.inputSchema ?? UNTYPED),
    };
    if (facts[name]?.outputSchema) tool.outputSchema = structuredClone(facts[name].outputSchema);
    return tool;
  });
}

/** Every Definition name the runtime knows: `extra`, registered ones and the generated registry's (sorted). */
export async function knownDefinitionNames(extra = []) {
  return [...new Set([...extra, ...(await sandboxApi.describeSandboxRegistry()).names])].sort();
}
