/**
 * `@vite-hub/sandbox/mcp`: the app's Definitions as Model Context Protocol tools over Streamable
 * HTTP (spec 2025-03-26 and later; https://modelcontextprotocol.io/specification), on the official
 * `@modelcontextprotocol/sdk`. The same server over stdio is `vite-hub-sandbox mcp` (docs/mcp.md).
 *
 * Tools: one per Definition (its name; description and `inputSchema` from its payload schema, see
 * {@link listDefinitionTools}), plus `sandbox_exec` (from `@vite-hub/sandbox/agent`) when
 * `commands` are given. `tools/call` runs the Definition with `startSandbox` on the configured
 * provider:
 * - a JSON result: `structuredContent` (an object as is; any other JSON value as `{ result }`) and
 *   the same JSON as a text block;
 * - `204`: a text block `(no result)`; a `text/*` body: its text; other bytes: an embedded
 *   `resource` (`sandbox://<name>/result`, base64 `blob`, the Response's content type);
 * - an error Response, or arguments the tool's `inputSchema` refuses: `isError: true`, a text block
 *   `SANDBOX_<CODE>: <message>`, and `_meta['vite-hub/sandbox'].error` `{ code, message, details? }`
 *   (refused arguments: `SANDBOX_INVALID_ARGUMENT`, `details.key` the first failing key as a path
 *   (`text`, `items[2].name`), `details.issues: [{ path, keyword, message }]`, the message listing
 *   each as `payload.<path>: <message>`). An unknown tool is a JSON-RPC error
 *   (-32602).
 * - The Run's handler lines are `notifications/message` (logger: the Definition's name, `info` for
 *   stdout, `warning` for stderr), and `notifications/progress` when the call has a progress token.
 * - Stateless by default: each POST gets its own server, so it runs behind any number of isolates;
 *   a client that drops the call's SSE stream aborts the Run (its Box is stopped), but a
 *   `notifications/cancelled` (its own POST) reaches no call, and no `tools/list_changed` is sent.
 *   With `sessions: true` both work (see {@link SandboxMcpHandlerOptions.sessions}).
 */

/** A JSON Schema object (MCP `inputSchema` / `outputSchema`): `type` is `'object'`. */
export interface ToolJsonSchema {
  type: 'object';
  [key: string]: unknown;
}

/** One Definition as a tool. */
export interface DefinitionTool {
  /** The Definition's name (the tool's name). */
  name: string;
  description: string;
  /** The JSON Schema of the payload (`{ type: 'object' }` where the Definition declares none). */
  inputSchema: ToolJsonSchema;
  /** The JSON Schema of `structuredContent`, where the result type is known. */
  outputSchema?: ToolJsonSchema;
}

/**
 * The tools of the Definitions the runtime knows (registered with `registerSandbox`, plus the
 * Vite plugin's generated registry), or of `definitions` only.
 */
export function listDefinitionTools(options?: { definitions?: readonly string[] }): Promise<DefinitionTool[]>;

/**
 * Replaces where the tool facts come from: `source()` gives `{ "<name>": { description?,
 * inputSchema?, outputSchema? } }` (`null`: none). The Vite plugin hands the generated registry's
 * to it; `vite-hub-sandbox mcp` hands what it prepared. Throws `SANDBOX_INVALID_ARGUMENT` for a
 * source that is neither a function nor `null`.
 */
export function setDefinitionToolFacts(
  source:
    | (() =>
        | Record<string, { description?: string; inputSchema?: ToolJsonSchema; outputSchema?: ToolJsonSchema }>
        | Promise<
            Record<string, { description?: string; inputSchema?: ToolJsonSchema; outputSchema?: ToolJsonSchema }>
          >)
    | null,
): void;

/** Options of {@link createSandboxMcpHandler}. */
export interface SandboxMcpHandlerOptions {
  /** The Definition names offered as tools (default: every Definition the app has). */
  definitions?: readonly string[];
  /**
   * Adds the `sandbox_exec` tool allowed to run these executables (names, no paths; see
   * `@vite-hub/sandbox/agent`). Each HTTP request opens at most one Session for it, closed when the
   * request's answer ends.
   */
  commands?: readonly string[];
  /**
   * Decides who may call, per request: `true` lets it through; `false` (or a throw) answers `401`;
   * a `Response` is answered as is (e.g. a `401` with `WWW-Authenticate`). Required in production.
   * Without it the handler answers only loopback requests (see {@link SandboxMcpHandler}).
   */
  authorize?: (request: Request) => boolean | Response | Promise<boolean | Response>;
  /**
   * Browser origins (`https://app.example`) allowed besides the request's own; never `'*'`. A
   * request with any other `Origin` header is answered `403` (DNS rebinding, spec "Security
   * Warning"). Without `authorize`, loopback origins (`http://localhost:6274`) are allowed too.
   */
  allowedOrigins?: readonly string[];
  /**
   * Whether this is production (default: Vite's `import.meta.env.PROD` where Vite compiled the
   * module, else `NODE_ENV === 'production'`, else `true` in a Worker without `NODE_ENV`). In
   * production, `authorize` is required.
   */
  production?: boolean;
  /**
   * Keep MCP sessions in this isolate's memory (default `false`: stateless). Each `initialize` gets
   * an `Mcp-Session-Id` and a server of its own, so `notifications/cancelled` aborts the Run it
   * names (its Box is stopped) and the session's GET stream carries
   * `notifications/tools/list_changed`: the tool list is read again every second while a session
   * is open (in `vite dev`, the regenerated registry), and a change is announced. A session ends
   * by the client's `DELETE` or after 10 minutes (600000 ms) without a request; an unknown
   * session id is answered `404`. For one long-lived process (`vite dev`, a Node server), not for
   * requests spread over isolates (Workers, serverless).
   */
  sessions?: boolean;
  /** The `serverInfo` of `initialize` (default `{ name: '@vite-hub/sandbox', version: '0.0.0' }`). */
  serverInfo?: { name: string; version: string };
}

/**
 * The Fetch handler: `POST` JSON-RPC in, a JSON or SSE Response out; stateless, `GET` and other
 * methods answer `405` (with `sessions`, `GET` opens the session's stream and `DELETE` ends it). Refusals come before anything is read, as a JSON-RPC error body (`code: -32000`):
 * `403` for a foreign `Origin` or (without `authorize`) a request not from loopback, `401` when
 * `authorize` says no.
 *
 * Loopback: `context.remoteAddress` (or srvx's `request.ip`, under Nitro/h3 v2) must be a loopback
 * address when known, the URL's host must be `localhost`, `*.localhost`, `127.x.x.x` or `::1`, and
 * `X-Forwarded-For`, `X-Real-IP`, `CF-Connecting-IP` must name only loopback addresses.
 */
export type SandboxMcpHandler = (request: Request, context?: { remoteAddress?: string }) => Promise<Response>;

/**
 * Creates the handler. Throws a `SandboxError` `SANDBOX_INVALID_ARGUMENT` (status 400) for a bad
 * option, and in production without `authorize` (it refuses to start there).
 *
 * @example Nitro route `server/routes/mcp.ts`
 * ```ts
 * import { createSandboxMcpHandler } from '@vite-hub/sandbox/mcp';
 * const mcp = createSandboxMcpHandler({ authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.MCP_TOKEN}` });
 * export default defineHandler((event) => mcp(event.req));
 * ```
 */
export function createSandboxMcpHandler(options?: SandboxMcpHandlerOptions): SandboxMcpHandler;

/**
 * Internal: `hubSandbox()`'s shim hands the app build's `import.meta.env.PROD` here (this package
 * is external to a Node build, so Vite never replaces it inside). `createSandboxMcpHandler` reads it
 * when `options.production` is not given. Not for apps.
 */
export function __setBundledProduction(production: boolean): void;
