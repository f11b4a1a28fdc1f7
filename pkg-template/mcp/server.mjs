// The MCP server over an app's Definitions, on the official SDK's low-level `Server` (the tool
// facts are JSON Schemas, not zod shapes): one tool per Definition (./definition-tools.mjs),
// `sandbox_exec` when commands are allowed (../agent), and `tools/call` running the Definition with
// `startSandbox`. The transports (stdio: ./stdio.mjs, Streamable HTTP: ./http.mjs) connect it.
//
// - Arguments refused by the tool's inputSchema: an `isError` result (validateToolInput of
//   ./definition-tools.mjs: SANDBOX_INVALID_ARGUMENT, `details.key` and `details.issues`).
// - The Run's handler lines: `notifications/message` (logger: the Definition's name; `info` for
//   stdout, `warning` for stderr; honours `logging/setLevel`), and `notifications/progress` (one
//   step per line) when the call carries `_meta.progressToken`, gathered and paced by
//   ./log-relay.mjs. Both are related to the call, so over Streamable HTTP they travel on the
//   call's own SSE stream.
// - The client's `notifications/cancelled` aborts `extra.signal`, which aborts the Run: its Box is
//   stopped, and the SDK sends no result for a cancelled request (spec: "Cancellation").
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import * as sandboxApi from '@vite-hub/sandbox';
import { SANDBOX_EXEC, sandbox as sandboxCapability } from '../agent/index.mjs';
import { listDefinitionTools, validateToolInput } from './definition-tools.mjs';
import { logRelay } from './log-relay.mjs';
import { errorResult, toolResultOf } from './tool-result.mjs';

/**
 * @param {{ definitions?: readonly string[], commands?: readonly string[], serverInfo?: { name: string, version: string } }} [options]
 *   `definitions`: the Definition names offered (default: all the runtime knows); `commands`: the
 *   executables `sandbox_exec` may run (no `sandbox_exec` without them).
 * @returns {{ server: Server, close(): Promise<void>, toolListChanged(): Promise<void> }}
 */
export function createDefinitionServer({ definitions, commands, serverInfo } = {}) {
  const server = new Server(serverInfo ?? { name: '@vite-hub/sandbox', version: '0.0.0' }, {
    capabilities: { tools: { listChanged: true }, logging: {} },
    // No code generation: the same validator in workerd as in Node.
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  const exec = commands ? sandboxCapability({ commands: [...commands] }) : null;

  const definitionTools = () => listDefinitionTools(definitions ? { definitions: [...definitions] } : {});

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    /** @type {Array<{ name: string, description: string, inputSchema: object, outputSchema?: object }>} */
    const tools = (await definitionTools()).map(({ name, description, inputSchema, outputSchema }) => ({
      name,
      description,
      inputSchema,
      ...(outputSchema ? { outputSchema } : {}),
    }));
    if (exec) tools.push(...exec.mcpTools());
    return { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    if (exec && name === SANDBOX_EXEC) return exec.callMcpTool({ name, arguments: args }, { signal: extra.signal });
    const tool = (await definitionTools()).find((item) => item.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(name)}`);
    try {
      await validateToolInput(name, args);
    } catch (error) {
      if (error?.name === 'SandboxError') return errorResult(error);
      throw error;
    }
    const relay = logRelay({
      notify: (notification) => extra.sendNotification(notification).catch(() => {}),
      // `isMessageIgnored` is the SDK's own filter of `logging/setLevel` (private in its types).
      ignored: (level) => /** @type {any} */ (server).isMessageIgnored(level, extra.sessionId),
      logger: name,
      progressToken: request.params._meta?.progressToken,
    });
    const run = sandboxApi.startSandbox(name, args, { signal: extra.signal, onLog: relay.onLog });
    let response;
    try {
      response = await run.response();
    } catch (error) {
      // Aborted (the client cancelled, or the transport closed): the Box is being stopped; wait
      // for it so nothing outlives the call, then let the SDK drop the request.
      await run.closed().catch(() => {});
      throw error;
    }
    const result = await toolResultOf(name, response);
    // The lines gathered so far go before the result (any later ones follow it).
    await relay.end();
    return result;
  });

  return {
    server,
    /** Announces `notifications/tools/list_changed` (after a Definition was added, removed or edited). */
    toolListChanged: () => server.sendToolListChanged(),
    async close() {
      await exec?.close();
      await server.close();
    },
  };
}
