// Streamable HTTP with sessions kept in this isolate's memory (`createSandboxMcpHandler({ sessions:
// true })`), for one long-lived server process (`vite dev`, a Node server): each `initialize` gets
// a server of its own and an `Mcp-Session-Id`, so a client's `notifications/cancelled` (its own
// POST) reaches the call it names, and its GET stream carries `notifications/tools/list_changed`.
//
// - A request naming an unknown session: 404 (spec: the client starts a new session).
// - A session ends by the client's DELETE, or after `idleMs` without a request (default 10 min).
// - The tool list is read again every `pollMs` (default 1000 ms) while a session is open: when
//   what `tools/list` would answer changed (a Definition added, removed, or its description or
//   schemas edited, as `vite dev` regenerates the registry), every session is told.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { refusal } from './request-guard.mjs';

/**
 * @param {{ createServer: () => ReturnType<typeof import('./server.mjs').createDefinitionServer>, listTools: () => Promise<unknown>, idleMs?: number, pollMs?: number }} options
 * @returns {{ handle(request: Request): Promise<Response>, close(): Promise<void>, readonly size: number }}
 */
export function createSessionStore({ createServer, listTools, idleMs = 600_000, pollMs = 1000 }) {
  /** @type {Map<string, { transport: WebStandardStreamableHTTPServerTransport, mcp: ReturnType<typeof createServer>, lastSeen: number }>} */
  const sessions = new Map();
  let timer = null;
  let lastTools = null;
  let polling = false;

  const end = async (id) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.mcp.close().catch(() => {});
    if (sessions.size === 0) stopTimer();
  };

  const tick = async () => {
    if (polling) return;
    polling = true;
    try {
      const now = Date.now();
      for (const [id, session] of sessions) if (now - session.lastSeen > idleMs) await end(id);
      if (sessions.size === 0) return;
      const tools = JSON.stringify(await listTools());
      if (lastTools !== null && tools !== lastTools)
        for (const session of sessions.values()) await session.mcp.toolListChanged().catch(() => {});
      lastTools = tools;
    } catch {
      // A registry being rewritten (vite dev): the next tick reads it again.
    } finally {
      polling = false;
    }
  };
  const startTimer = () => {
    if (timer) return;
    timer = setInterval(tick, pollMs);
    /** @type {any} */ (timer).unref?.();
    listTools().then(
      (tools) => {
        lastTools ??= JSON.stringify(tools);
      },
      () => {},
    );
  };
  const stopTimer = () => {
    clearInterval(timer);
    timer = null;
    lastTools = null;
  };

  return {
    get size() {
      return sessions.size;
    },
    async handle(request) {
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const session = sessions.get(id);
        if (!session) return refusal(404, 'Session not found: initialize a new one');
        session.lastSeen = Date.now();
        return session.transport.handleRequest(request);
      }
      // No session id: only an initialize request may open one (the transport answers 400 otherwise).
      const mcp = createServer();
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, { transport, mcp, lastSeen: Date.now() });
          startTimer();
        },
        onsessionclosed: (sessionId) => end(sessionId),
      });
      await mcp.server.connect(transport);
      const response = await transport.handleRequest(request);
      if (!transport.sessionId || !sessions.has(transport.sessionId)) await mcp.close().catch(() => {});
      return response;
    },
    async close() {
      for (const id of [...sessions.keys()]) await end(id);
      stopTimer();
    },
  };
}
