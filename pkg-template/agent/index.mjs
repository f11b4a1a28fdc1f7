// `@vite-hub/sandbox/agent`: the capability `sandbox({ commands, env })` and its one tool,
// `sandbox_exec`, for the AI SDK (`generateText({ tools })`) and for an MCP server (`tools/list`,
// `tools/call`). The allow-lists, the description, the JSON Schema and every check of a tool input
// are in rules.mjs (why JS, and what an allow-list cannot stop: see there); a Command runs on a
// Session of `@vite-hub/sandbox` (`openSandboxSession`). Contract: vitehub-sandbox-contract.md §7.
//
// One Session per capability, opened by the first allowed call and kept (so an agent's calls
// share the Box's files), closed by `close()` / `await using`. A refused input throws before any
// Session is asked for, so it never reaches a Box.
import * as sandboxApi from '@vite-hub/sandbox';
import { sandboxError } from '../runtime/sandbox-error.mjs';
import { checkAllowed, checkExecInput, inputJsonSchema, toolDescription } from './rules.mjs';

export { BLOCKED_ENV_NAMES } from './rules.mjs';
export { definitionTools } from './definition-tools.mjs';

/** The tool's name. */
export const SANDBOX_EXEC = 'sandbox_exec';

/** What a `sandbox_exec` call gives back (MCP `outputSchema`). */
const OUTPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    exitCode: { type: 'integer', description: 'The exit status of the command (0 = success).' },
    ok: { type: 'boolean', description: 'Whether exitCode is 0.' },
    stdout: { type: 'string' },
    stderr: { type: 'string' },
    truncated: {
      type: 'boolean',
      const: true,
      description: 'Present when stdout or stderr printed more than 16 MiB and only its end is kept.',
    },
  },
  required: ['exitCode', 'ok', 'stdout', 'stderr'],
});

/** JSON Schema dialects the input schema is valid in (Standard JSON Schema `target`). */
const SCHEMA_TARGETS = new Set(['draft-07', 'draft-2020-12']);

/**
 * The `sandbox({ commands, env })` capability.
 * @param {import('@vite-hub/sandbox/agent').SandboxCapabilityOptions} options
 *   `env`: the env names an input may set (exact names; none by default); `session`: a function
 *   returning a Session (or a promise of one), or the options of `openSandboxSession`; default
 *   `openSandboxSession()`. The capability closes that Session.
 */
export function sandbox(options) {
  // Throws SANDBOX_INVALID_ARGUMENT for an empty list, a name that is not an executable, or an env
  // name that is not one or is a loader or interpreter hook.
  const allowed = checkAllowed(options);
  const description = toolDescription(allowed);
  const openSession = sessionOpener(options?.session);

  let opening = null; // Promise<Session> while a Session is open or opening
  let closed = false;

  const session = () => {
    opening ??= Promise.resolve()
      .then(openSession)
      .then((opened) => {
        if (typeof opened?.exec !== 'function')
          throw sandboxError(
            'SANDBOX_INVALID_ARGUMENT',
            'sandbox({ session }) must give a Session (an object with exec())',
          );
        return opened;
      })
      .catch((error) => {
        opening = null; // the next call tries again
        throw error;
      });
    return opening;
  };

  /**
   * `sandbox_exec`: checks `input`, then runs it on the Session (AI SDK `execute`). The Session's
   * exec kills the Command when `abortSignal` aborts, and rejects with its reason.
   */
  const execute = async (input, invocation = {}) => {
    const call = checkExecInput(allowed, input);
    if (closed)
      throw sandboxError(
        'SANDBOX_INVALID_STATE',
        'sandbox_exec was called after its sandbox() capability was closed; create a new one',
      );
    const signal = invocation?.abortSignal;
    signal?.throwIfAborted();
    const handle = await session();
    signal?.throwIfAborted();
    const result = await handle.exec(call.command, call.args, signal ? { ...call.options, signal } : call.options);
    const answer = { exitCode: result.exitCode, ok: result.ok, stdout: result.stdout, stderr: result.stderr };
    // The agent must know the output it reads lost its beginning.
    if (result.truncated === true) answer.truncated = true;
    return answer;
  };

  const inputSchema = {
    '~standard': {
      version: 1,
      vendor: '@vite-hub/sandbox',
      // The same checks as execute, so a tool-call loop reports a refused input to the model
      // without calling execute at all.
      validate(value) {
        try {
          checkExecInput(allowed, value);
          return { value };
        } catch (error) {
          if (error?.name !== 'SandboxError') throw error;
          return { issues: [{ message: error.message }] };
        }
      },
      jsonSchema: {
        input: (request) => schemaFor(allowed, request),
        output: (request) => schemaFor(allowed, request),
      },
    },
  };

  const sandboxExec = Object.freeze({ type: 'function', description, inputSchema, execute });

  const close = async () => {
    closed = true;
    const pending = opening;
    opening = null;
    if (!pending) return;
    let opened;
    try {
      opened = await pending;
    } catch {
      return; // nothing was opened
    }
    await opened.close?.();
  };

  const capability = {
    name: 'sandbox',
    commands: allowed.commands,
    env: allowed.env,
    tools: Object.freeze({ [SANDBOX_EXEC]: sandboxExec }),
    /** The MCP `tools/list` entries: `[{ name, description, inputSchema, outputSchema }]`. */
    mcpTools: () => [
      {
        name: SANDBOX_EXEC,
        description,
        inputSchema: inputJsonSchema(allowed),
        outputSchema: structuredClone(OUTPUT_SCHEMA),
      },
    ],
    /**
     * An MCP `tools/call`: `params` is `{ name, arguments }`; resolves to `{ content: [{ type:
     * 'text', text }], structuredContent?, isError }`. A refused input or a failed Command is a
     * result with `isError: true` (the model reads it); an unknown tool name or an abort throws.
     * @param {{ name: string, arguments?: Record<string, unknown> }} params
     * @param {{ signal?: AbortSignal }} [options]
     */
    callMcpTool: async (params, { signal } = {}) => {
      if (params?.name !== SANDBOX_EXEC) {
        throw sandboxError(
          'SANDBOX_INVALID_ARGUMENT',
          `Unknown tool ${JSON.stringify(String(params?.name))}; this server has ${SANDBOX_EXEC}`,
        );
      }
      let result;
      try {
        result = await execute(params.arguments ?? {}, { abortSignal: signal });
      } catch (error) {
        if (error?.name !== 'SandboxError' || signal?.aborted) throw error;
        return { content: [{ type: 'text', text: `${error.code}: ${error.message}` }], isError: true };
      }
      return {
        content: [{ type: 'text', text: JSON.stringify(result) }],
        structuredContent: result,
        isError: !result.ok,
      };
    },
    close,
  };
  capability[Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')] = close;
  return capability;
}

/**
 * @param {import('@vite-hub/sandbox/agent').SandboxCapabilityOptions['session']} source
 * @returns {() => import('@vite-hub/sandbox/agent').SandboxExecSession | Promise<import('@vite-hub/sandbox/agent').SandboxExecSession>}
 */
function sessionOpener(source) {
  if (typeof source === 'function') return source;
  if (source !== undefined && (source === null || typeof source !== 'object')) {
    throw sandboxError(
      'SANDBOX_INVALID_ARGUMENT',
      'sandbox({ session }) must be a function returning a Session or the options of openSandboxSession',
    );
  }
  return () => {
    if (typeof sandboxApi.openSandboxSession !== 'function') {
      throw sandboxError(
        'SANDBOX_NOT_SUPPORTED',
        'sandbox_exec needs openSandboxSession, which this build of @vite-hub/sandbox does not export; pass sandbox({ session: () => yourSession })',
      );
    }
    return sandboxApi.openSandboxSession(source);
  };
}

function schemaFor(allowed, request) {
  const target = request?.target ?? 'draft-07';
  if (!SCHEMA_TARGETS.has(target))
    throw new Error(`sandbox_exec has no JSON Schema for target ${target} (only ${[...SCHEMA_TARGETS].join(', ')})`);
  return inputJsonSchema(allowed);
}
