// `@vite-hub/sandbox/mcp`: createSandboxMcpHandler, the MCP server over the app's Definitions as a
// Fetch handler (Streamable HTTP, spec 2025-03-26 and later) that a Nitro/h3 route, a Worker or any
// fetch server mounts, in Node and in workerd. Stateless: each POST gets its own server and
// transport (the SDK's WebStandardStreamableHTTPServerTransport without session ids), so it runs
// behind any number of isolates; a GET (the optional server-to-client stream) is answered 405.
// Who may call: ./request-guard.mjs. The tools: ./server.mjs.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { sandboxError } from '../runtime/sandbox-error.mjs';
import { checkCanStart, isAllowedOrigin, isLoopbackRequest, refusal } from './request-guard.mjs';
import { createDefinitionServer } from './server.mjs';
import { createSessionStore } from './sessions.mjs';
import { listDefinitionTools } from './definition-tools.mjs';

export { listDefinitionTools, setDefinitionToolFacts } from './definition-tools.mjs';
export { setBundledProduction as __setBundledProduction } from './request-guard.mjs';

/**
 * @param {import('./index.d.ts').SandboxMcpHandlerOptions} [options]
 * @returns {import('./index.d.ts').SandboxMcpHandler}
 */
export function createSandboxMcpHandler(options = {}) {
  if (options === null || typeof options !== 'object')
    throw sandboxError('SANDBOX_INVALID_ARGUMENT', 'createSandboxMcpHandler(options) expects an object');
  const { definitions, commands, authorize, allowedOrigins, production, serverInfo, sessions } = options;
  if (sessions !== undefined && typeof sessions !== 'boolean')
    throw sandboxError('SANDBOX_INVALID_ARGUMENT', 'createSandboxMcpHandler: options.sessions must be a boolean');
  if (definitions !== undefined && (!Array.isArray(definitions) || definitions.some((n) => typeof n !== 'string')))
    throw sandboxError(
      'SANDBOX_INVALID_ARGUMENT',
      'createSandboxMcpHandler: options.definitions must be an array of Definition names',
    );
  if (
    allowedOrigins !== undefined &&
    (!Array.isArray(allowedOrigins) || allowedOrigins.some((o) => typeof o !== 'string' || o === '*'))
  )
    throw sandboxError(
      'SANDBOX_INVALID_ARGUMENT',
      'createSandboxMcpHandler: options.allowedOrigins must be an array of origins (never "*")',
    );
  checkCanStart({ authorize, production });
  const loopbackOnly = authorize === undefined;
  const createServer = () => createDefinitionServer({ definitions, commands, serverInfo });
  const store = sessions
    ? createSessionStore({
        createServer,
        listTools: () => listDefinitionTools(definitions ? { definitions: [...definitions] } : {}),
      })
    : null;

  return async function handleMcpRequest(request, context) {
    if (
      !isAllowedOrigin(request, {
        allowedOrigins: allowedOrigins ? [...allowedOrigins] : [],
        loopbackPages: loopbackOnly,
      })
    )
      return refusal(403, `Forbidden: origin ${request.headers.get('origin')} may not call this MCP server`);
    if (loopbackOnly) {
      if (!isLoopbackRequest(request, context))
        return refusal(
          403,
          'Forbidden: this MCP server answers only this machine (loopback) until it is given authorize(request)',
        );
    } else {
      let allowed;
      try {
        allowed = await authorize(request);
      } catch {
        allowed = false;
      }
      if (allowed instanceof Response) return allowed;
      if (allowed !== true) return refusal(401, 'Unauthorized');
    }
    if (store) return store.handle(request);
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });

    const mcp = createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcp.server.connect(transport);
    let response;
    try {
      response = await transport.handleRequest(request);
    } catch (error) {
      await mcp.close();
      throw error;
    }
    if (!response.body) {
      await mcp.close();
      return response;
    }
    // The server lives as long as its answer: a client that drops the stream closes it, which
    // aborts the calls under way (their Runs stop their Boxes) and closes sandbox_exec's Session.
    const { readable, writable } = new TransformStream();
    response.body
      .pipeTo(writable)
      .catch(() => {})
      .finally(() => mcp.close().catch(() => {}));
    return new Response(readable, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
