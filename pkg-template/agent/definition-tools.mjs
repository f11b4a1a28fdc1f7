// `definitionTools({ definitions })`: every Definition as an AI SDK tool (`generateText({ tools })`),
// in the same shape as `sandbox_exec` (a Standard Schema input with Standard JSON Schema, no
// dependency on `ai`). The facts and the payload check are mcp/definition-tools.mjs's (one source
// for MCP and the AI SDK); each call is one `runSandbox` whose Response is decoded here.
import * as sandboxApi from '@vite-hub/sandbox';
import { listDefinitionTools, validateToolInput } from '../mcp/definition-tools.mjs';
import { sandboxError } from '../runtime/sandbox-error.mjs';

/**
 * The Standard JSON Schema `target`s a tool answers: its schema as generated (draft-07 from
 * TypeScript and, where the vendor has it, from a Standard Schema), whose `$schema` names its
 * dialect; the AI SDK asks for draft-07.
 */
const TARGETS = new Set(['draft-07', 'draft-2020-12']);

/** The most text of a non-JSON error body kept in a message, in characters. */
const MAX_ERROR_TEXT = 4096;

/**
 * A Run's Response as a tool result: JSON parsed, `204` as `null`, `text/*` as a string, other
 * bytes as `{ contentType, base64 }`. A non-2xx Response throws: a `SandboxError` with the code and
 * message of its `{"error":{code,message,details}}` body (the runtime's failures), else
 * `SANDBOX_HANDLER_ERROR` with the status and the start of the body (a handler's own error Response).
 */
async function decodeResponse(name, response) {
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok) {
    const text = await response.text();
    let envelope;
    try {
      envelope = JSON.parse(text)?.error;
    } catch {}
    if (typeof envelope?.code === 'string' && typeof envelope.message === 'string') {
      let error;
      try {
        error = sandboxError(envelope.code, envelope.message);
      } catch {
        error = sandboxError('SANDBOX_HANDLER_ERROR', `${envelope.code}: ${envelope.message}`);
      }
      if (envelope.details !== undefined) error.details = envelope.details;
      throw error;
    }
    throw sandboxError(
      'SANDBOX_HANDLER_ERROR',
      `the Definition "${name}" answered ${response.status}: ${text.slice(0, MAX_ERROR_TEXT)}`,
    );
  }
  if (response.status === 204) return null;
  if (/^application\/([\w.+-]+\+)?json\b/i.test(type)) return response.json();
  if (/^text\//i.test(type)) return response.text();
  const bytes = new Uint8Array(await response.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { contentType: type || 'application/octet-stream', base64: btoa(binary) };
}

/**
 * One AI SDK tool for one listed Definition.
 * @param {{ name: string, description: string, inputSchema: object, outputSchema?: object }} listed
 */
function definitionTool({ name, description, inputSchema, outputSchema }) {
  const jsonSchemaFor = (schema) => (request) => {
    const wanted = request?.target ?? 'draft-07';
    if (!TARGETS.has(wanted))
      throw new Error(`the tool "${name}" has no JSON Schema for target ${wanted} (only ${[...TARGETS].join(', ')})`);
    return structuredClone(schema);
  };
  /**
   * Checks `input` against the inputSchema, then runs the Definition with `abortSignal` (an abort
   * stops the Run and its Box, and rejects with the signal's reason).
   */
  const execute = async (input, invocation = {}) => {
    const signal = invocation?.abortSignal;
    signal?.throwIfAborted();
    await validateToolInput(name, input);
    const response = await sandboxApi.runSandbox(name, input, signal ? { signal } : undefined);
    return decodeResponse(name, response);
  };
  const tool = {
    type: 'function',
    description,
    inputSchema: {
      '~standard': {
        version: 1,
        vendor: '@vite-hub/sandbox',
        // The same check as execute, so a tool-call loop reports a refused payload to the model
        // without calling execute at all.
        async validate(value) {
          try {
            await validateToolInput(name, value);
            return { value };
          } catch (error) {
            if (error?.name !== 'SandboxError' || error.code !== 'SANDBOX_INVALID_ARGUMENT') throw error;
            return {
              issues: (error.details?.issues ?? [{ path: [], message: error.message }]).map((issue) => ({
                message: issue.message,
                path: issue.path,
              })),
            };
          }
        },
        jsonSchema: { input: jsonSchemaFor(inputSchema), output: jsonSchemaFor(inputSchema) },
      },
    },
    execute,
  };
  if (outputSchema) {
    // The result's schema (AI SDK `outputSchema`: a typed result); the result is not checked against it.
    const give = jsonSchemaFor(outputSchema);
    tool.outputSchema = {
      '~standard': {
        version: 1,
        vendor: '@vite-hub/sandbox',
        validate: (value) => ({ value }),
        jsonSchema: { input: give, output: give },
      },
    };
  }
  return Object.freeze(tool);
}

/**
 * Every Definition (or those named) as an AI SDK tool, keyed by Definition name.
 * @param {{ definitions?: string[] }} [options]
 * @returns {Promise<Record<string, object>>}
 */
export async function definitionTools(options = {}) {
  if (options === null || typeof options !== 'object')
    throw sandboxError('SANDBOX_INVALID_ARGUMENT', 'definitionTools(options): options must be an object');
  const tools = {};
  for (const listed of await listDefinitionTools({ definitions: options.definitions })) {
    Object.defineProperty(tools, listed.name, { value: definitionTool(listed), enumerable: true });
  }
  return Object.freeze(tools);
}
