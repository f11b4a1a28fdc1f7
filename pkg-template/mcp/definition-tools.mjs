// Every Definition as a tool: its name, description and JSON Schemas, read from the tool facts the
// Vite plugin wrote into the generated registry (vite/tool-facts.mjs; no compiler at run time), and
// the check of a tool call's payload against its inputSchema before any Box opens. Shared by
// `@vite-hub/sandbox/mcp` (tools/list, tools/call) and `definitionTools()` of
// `@vite-hub/sandbox/agent`. Node and workerd alike. Rules: docs/definitions.md "As a tool".
import { Validator } from '@cfworker/json-schema';
import * as sandboxApi from '@vite-hub/sandbox';
import { sandboxError } from '../runtime/sandbox-error.mjs';

/** The `inputSchema` of a Definition without tool facts (MCP requires an object schema). */
const UNTYPED = Object.freeze({ type: 'object' });

/** At most this many refused keys are spelled out in a message (all are in `details.issues`). */
const MAX_LISTED_ISSUES = 10;

/** Where the facts come from: the generated facade's export, unless {@link setDefinitionToolFacts} replaced it. */
let factsSource = null;

/** Validators by Definition name, for the schema they were built from. */
const validators = new Map();

/**
 * Replaces where tool facts are read: for a server without the Vite plugin's facade, e.g.
 * `vite-hub-sandbox mcp`, which registers what `prepareDefinition(root, discovered, { tool: true })`
 * prepared and gives its `tool.facts` here (`registerSandbox` names without facts stay untyped).
 * @param {(() => Record<string, object> | Promise<Record<string, object>>) | null} source
 *   a function giving `{ "<name>": { description?, inputSchema, outputSchema? } }`; `null` goes
 *   back to the generated registry's.
 */
export function setDefinitionToolFacts(source) {
  if (source !== null && typeof source !== 'function')
    throw sandboxError('SANDBOX_INVALID_ARGUMENT', 'setDefinitionToolFacts(source): source must be a function or null');
  factsSource = source;
  validators.clear();
}

/**
 * `name → facts` of every Definition the runtime knows: the generated registry's (or those of
 * {@link setDefinitionToolFacts}), then the `registerSandbox` ones without facts (untyped).
 * @returns {Promise<Map<string, { description?: string, inputSchema?: object, outputSchema?: object, warning?: string }>>}
 */
async function readFacts() {
  // The generated facade (vite/generate.mjs) adds this export to `@vite-hub/sandbox`.
  const facade = /** @type {{ __sandboxToolFacts?: () => Record<string, object> }} */ (
    /** @type {unknown} */ (sandboxApi)
  );
  const source = factsSource ?? facade.__sandboxToolFacts;
  const facts = new Map(Object.entries((typeof source === 'function' ? await source() : null) ?? {}));
  for (const { name } of sandboxApi.listSandboxes()) if (!facts.has(name)) facts.set(name, { inputSchema: UNTYPED });
  return facts;
}

/** Every Definition name the runtime knows (generated registry and `registerSandbox`), sorted. */
export async function knownDefinitionNames() {
  return [...(await readFacts()).keys()].sort();
}

/** The untyped-tool warning last printed per Definition name. */
const warned = new Map();

/** The facts of the chosen Definitions, in name order (or the order of `definitions`). */
async function chosen(definitions) {
  const facts = await readFacts();
  let names = [...facts.keys()].sort();
  if (definitions !== undefined) {
    if (!Array.isArray(definitions) || definitions.some((name) => typeof name !== 'string'))
      throw sandboxError('SANDBOX_INVALID_ARGUMENT', 'definitions must be an array of Definition names');
    const unknown = definitions.filter((name) => !facts.has(name));
    if (unknown.length > 0)
      throw sandboxError(
        'SANDBOX_NOT_FOUND',
        `no Definition named ${unknown.map((name) => JSON.stringify(name)).join(', ')}; the app has ${names.map((name) => JSON.stringify(name)).join(', ') || 'none'}`,
      );
    names = [...new Set(definitions)];
  }
  return names.map((name) => ({ name, facts: facts.get(name) }));
}

/**
 * One tool per Definition.
 * @param {{ definitions?: string[] }} [options] `definitions`: the names to list (default: all, by name)
 * @returns {Promise<Array<{ name: string, description: string, inputSchema: object, outputSchema?: object }>>}
 *   `description`: `defineSandbox({ description })` or the folder's `package.json` description,
 *   else `Runs the Sandbox Definition "<name>".`; `inputSchema`: the declared Standard Schema's JSON
 *   Schema, else the one generated from the handler's TypeScript payload type, else
 *   `{ "type": "object" }`; `outputSchema`: from the handler's return type (declared or inferred; an object).
 * @throws SandboxError `SANDBOX_NOT_FOUND` naming a name in `definitions` the app does not have;
 *   `SANDBOX_INVALID_ARGUMENT` when `definitions` is not an array of strings.
 */
export async function listDefinitionTools({ definitions } = {}) {
  return (await chosen(definitions)).map(({ name, facts }) => {
    // Why a tool takes any object (vite/tool-facts.mjs), once per name and text per process:
    // told to whoever lists the tools, not to every app the plugin serves.
    if (facts.warning && warned.get(name) !== facts.warning) {
      warned.set(name, facts.warning);
      console.warn(facts.warning);
    }
    const tool = {
      name,
      description: facts.description ?? `Runs the Sandbox Definition "${name}".`,
      inputSchema: structuredClone(facts.inputSchema ?? UNTYPED),
    };
    if (facts.outputSchema) tool.outputSchema = structuredClone(facts.outputSchema);
    return tool;
  });
}

/** The cfworker draft name of a schema's `$schema` (default 2020-12). */
function draftOf(schema) {
  const uri = String(schema.$schema ?? '');
  if (uri.includes('draft-07')) return '7';
  if (uri.includes('draft-04')) return '4';
  if (uri.includes('2019-09')) return '2019-09';
  return '2020-12';
}

/** `#/items/2/name` → `['items', 2, 'name']` (JSON Pointer, RFC 6901). */
function pointerPath(location) {
  return location
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : part));
}

/** `payload.items[2].name`, as readValidatedPayload spells a path. */
function spell(path) {
  let out = 'payload';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

/** The leaf issues of a cfworker result: `{ path, keyword, message }`, a missing key's path ending in it. */
function issuesOf(result) {
  // cfworker reports each failing keyword and every schema wrapping it (properties, $ref, allOf…):
  // keep the ones no other error is nested under.
  const errors = result.errors.filter(
    (error) =>
      !result.errors.some((other) => other !== error && other.keywordLocation.startsWith(`${error.keywordLocation}/`)),
  );
  return errors.map((error) => {
    const path = pointerPath(error.instanceLocation);
    if (error.keyword === 'required') {
      const missing = /required property "((?:[^"\\]|\\.)*)"/.exec(error.error)?.[1];
      if (missing !== undefined) return { path: [...path, missing], keyword: 'required', message: 'is required' };
    }
    return { path, keyword: error.keyword, message: error.error };
  });
}

/**
 * Checks a tool call's payload against its Definition's `inputSchema` (the JSON Schema of its
 * declared Standard Schema or of its TypeScript payload type), before any Box opens.
 * @param {string} name the Definition
 * @param {unknown} input the tool call's arguments
 * @returns {Promise<unknown>} `input`, unchanged
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT` (400) for a payload the schema refuses: the
 *   message lists up to 10 issues as `payload.<path>: <message>` (a missing key: `payload.<key>:
 *   is required`), `details.key` is the first failing key as a path (`text`, `items[2].name`;
 *   `null` when the payload itself is refused), `details.issues` all of them as `{ path, keyword, message }`;
 *   `SANDBOX_NOT_FOUND` when the app has no Definition `name`.
 */
export async function validateToolInput(name, input) {
  const [{ facts }] = await chosen([name]);
  const schema = facts.inputSchema ?? UNTYPED;
  const key = JSON.stringify(schema);
  let cached = validators.get(name);
  if (cached?.key !== key) {
    // A copy: cfworker's Validator writes into the schema it is given (`__absolute_uri__`), and
    // UNTYPED (a Definition without facts) is frozen.
    cached = { key, validator: new Validator(structuredClone(schema), draftOf(schema), false) };
    validators.set(name, cached);
  }
  const result = cached.validator.validate(input);
  if (result.valid) return input;
  const issues = issuesOf(result);
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${spell(issue.path)}: ${issue.message}`);
  if (issues.length > MAX_LISTED_ISSUES) listed.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
  const error = sandboxError(
    'SANDBOX_INVALID_ARGUMENT',
    `the payload of "${name}" does not match its inputSchema: ${listed.join('; ')}`,
  );
  const first = issues[0]?.path ?? [];
  error.details = { key: first.length > 0 ? spell(first).slice('payload'.length).replace(/^\./, '') : null, issues };
  throw error;
}
