// A Definition's tool facts (Node only, at generation): its description and the JSON Schemas of
// its payload and result, written into the generated registry so `tools/list` and
// `definitionTools()` need no compiler at run time (pkg-template/mcp/definition-tools.mjs reads
// them). Rules: docs/definitions.md "As a tool"; how and what it costs:
// docs/internals/build-steps.md "Tool facts".
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { invalidArgument } from './sandbox-error.mjs';
import { typeScriptToolSchemas } from './tool-schema-ts.mjs';

/** The `inputSchema` of a Definition whose payload has no schema (MCP requires an object schema). */
export const UNTYPED_INPUT_SCHEMA = Object.freeze({ type: 'object' });

/**
 * JSON Schema dialects asked of a Standard JSON Schema, in order: draft-07 first, the dialect of the
 * TypeScript generator and the one the AI SDK asks for; the schema's `$schema` names it.
 */
const STANDARD_TARGETS = ['draft-07', 'draft-2020-12'];

let evaluations = 0;

/**
 * A generated schema with its root `$ref` resolved (MCP clients require `"type": "object"` at
 * the root) and an empty `definitions` dropped.
 */
function rootObjectSchema(schema) {
  let out = { ...schema };
  const match = typeof out.$ref === 'string' && /^#\/(definitions|\$defs)\/([^/]+)$/.exec(out.$ref);
  if (match && out[match[1]]?.[match[2]]) {
    const [, where, name] = match;
    const { $ref, ...rest } = out;
    out = { ...rest, ...out[where][name] };
    // The resolved definition stays only when something else still points at it (a recursive type).
    if (!JSON.stringify({ ...out, [where]: undefined }).includes(JSON.stringify(`#/${where}/${name}`))) {
      const { [name]: _resolved, ...others } = out[where];
      out[where] = others;
    }
  }
  for (const key of ['definitions', '$defs']) if (out[key] && Object.keys(out[key]).length === 0) delete out[key];
  return out;
}

/**
 * Evaluates a free-form Definition's bundle (its top-level code runs once, on the host, as a
 * vite.config does) for `defineSandbox({ input })`, and asks that Standard Schema for its JSON
 * Schema. The bundle is written under the project's `node_modules/.vite-hub-sandbox/` (so its
 * bare imports resolve as the app's, and no watcher sees it) and removed at once.
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT` naming the file: the module throws, `input` is
 *   not a Standard Schema v1, or it has no Standard JSON Schema (`~standard.jsonSchema`).
 */
async function standardJsonSchema(appRoot, discovered, bundleCode) {
  const file = discovered.entry;
  const dir = path.join(appRoot, discovered.dir, 'node_modules', '.vite-hub-sandbox');
  await fs.mkdir(dir, { recursive: true });
  // A new URL per evaluation: Node caches modules by URL, and an edit must be seen.
  const temp = path.join(dir, `input-${process.pid}-${++evaluations}.mjs`);
  await fs.writeFile(temp, bundleCode);
  let module;
  try {
    module = await import(pathToFileURL(temp).href);
  } catch (error) {
    throw invalidArgument(
      `${file}: evaluating the file for its defineSandbox({ input }) schema failed: ${error?.message ?? error}`,
      error,
    );
  } finally {
    await fs.rm(temp, { force: true });
  }
  const standard = module.input?.['~standard'];
  if (standard?.version !== 1)
    throw invalidArgument(
      `${file}: defineSandbox({ input }) must be a Standard Schema v1 (zod ≥ 4.2, valibot, arktype…); got ${standard === undefined ? 'a value without "~standard"' : `version ${String(standard?.version)}`}.`,
    );
  if (typeof standard.jsonSchema?.input !== 'function')
    throw invalidArgument(
      `${file}: defineSandbox({ input }) is a Standard Schema (${standard.vendor}) without a Standard JSON Schema (~standard.jsonSchema), so no tool inputSchema can be made from it; use zod ≥ 4.2, or wrap a valibot schema with toStandardJsonSchema from @valibot/to-json-schema.`,
    );
  const failures = [];
  for (const target of STANDARD_TARGETS) {
    try {
      return standard.jsonSchema.input({ target });
    } catch (error) {
      failures.push(`${target}: ${error?.message ?? error}`);
    }
  }
  throw invalidArgument(
    `${file}: the ${standard.vendor} schema of defineSandbox({ input }) has no JSON Schema (${failures.join('; ')}).`,
  );
}

/**
 * The tool facts of one prepared Definition.
 * @param {string} appRoot absolute app root
 * @param {{ name: string, kind: 'package' | 'free-form', dir: string, entry: string }} discovered
 * @param {{ description?: string | null, input?: boolean, bundleCode?: Uint8Array | string }} [freeForm]
 *   for a free-form Definition: its checked `defineSandbox` options and the bundle
 * @returns {Promise<{ facts: { description?: string, inputSchema?: object, outputSchema?: object, schema?: 'standard' | 'typescript' | 'none' }, warning?: string }>}
 *   `inputSchema` and `schema` are always set;
 *   `schema` says where `inputSchema` came from; `warning` (for the dev log) when it is the untyped
 *   `{ "type": "object" }`, saying why.
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT` from {@link standardJsonSchema}, or when a
 *   schema's root is not an object (a tool's payload must be an object).
 */
export async function definitionToolFacts(appRoot, discovered, freeForm = {}) {
  /** @type {{ description?: string, inputSchema?: object, outputSchema?: object, schema?: 'standard' | 'typescript' | 'none' }} */
  const facts = {};
  if (discovered.kind === 'package') {
    const manifest = await fs
      .readFile(path.join(appRoot, discovered.dir, 'package.json'), 'utf8')
      .then(JSON.parse)
      .catch(() => ({}));
    if (typeof manifest?.description === 'string' && manifest.description.trim() !== '')
      facts.description = manifest.description;
  } else if (typeof freeForm.description === 'string') {
    facts.description = freeForm.description;
  }
  const source = await fs.readFile(path.join(appRoot, discovered.entry), 'utf8');
  const typed = await typeScriptToolSchemas(appRoot, discovered, source);
  const checkObject = (schema, origin) => {
    const root = rootObjectSchema(schema);
    if (root.type !== 'object')
      throw invalidArgument(
        `${discovered.entry}: the payload ${origin} of "${discovered.name}" is not an object schema (type ${JSON.stringify(root.type)}); a tool's payload must be an object.`,
      );
    return root;
  };
  let warning;
  if (freeForm.input) {
    facts.inputSchema = checkObject(await standardJsonSchema(appRoot, discovered, freeForm.bundleCode), 'schema');
    facts.schema = 'standard';
  } else if (typed.inputSchema) {
    const root = rootObjectSchema(typed.inputSchema);
    if (root.type === 'object') {
      facts.inputSchema = root;
      facts.schema = 'typescript';
    } else {
      warning = `its payload type is not an object type (tools take an object payload)`;
    }
  } else {
    warning = typed.reason;
  }
  if (!facts.inputSchema) {
    facts.inputSchema = { ...UNTYPED_INPUT_SCHEMA };
    facts.schema = 'none';
  }
  // MCP: an outputSchema is an object schema (a result of another type gets none).
  const output = typed.outputSchema && rootObjectSchema(typed.outputSchema);
  if (output?.type === 'object') facts.outputSchema = output;
  return warning === undefined
    ? { facts }
    : {
        facts,
        warning: `[sandbox] "${discovered.name}" has no payload schema: ${warning}; its tool takes any object ({ "type": "object" }). Declare defineSandbox({ input }) or type the handler's payload (docs/definitions.md "As a tool").`,
      };
}
