// The Cloudflare Sandbox container control API (protocol note §4, `@cloudflare/sandbox` 0.12.10)
// over the shared Box engine. Every route lives under `/cloudflare/<containerId>`: the rest of the
// path is exactly the path the `Sandbox` Durable Object sends to its container on port 3000
// (`/`, `/api/execute`, …), so the DO-side forwarder only prefixes it (see docs/internals/box-host.md).
// Route table, dispatch and the command routes; the file routes are in cloudflare-files.mjs, the
// background process routes in cloudflare-processes.mjs.
import { normalizeBoxPath } from '../engine/paths.mjs';
import { CONTAINER_ID, CONTAINER_IDLE_MS, CONTAINER_WORK_DIR, containerEnv } from './cloudflare-containers.mjs';
import { ContainerApiError, sendContainerError, sendContainerJson } from './cloudflare-errors.mjs';
import { deleteFile, exists, mkdir, readFile, writeFile } from './cloudflare-files.mjs';
import { processRoutes } from './cloudflare-processes.mjs';
import { readJson } from './http-io.mjs';
import { startSse } from './sse.mjs';
import { MAX_TIMER_MS } from '../engine/box.mjs';

/** The SDK version whose container this API imitates (`GET /api/version`, §4.3). */
export const CONTAINER_API_VERSION = '0.12.10';
/** The reserved session id of one-shot commands (§4.2). */
export const NO_SESSION = '__DISABLE_SESSION__';
/** How often a running command renews its container's idle lifetime (ms). */
const RENEW_EVERY_MS = 60_000;
/** The session of a request that names none (§4.2). */
const DEFAULT_SESSION = 'default';

/** [method, container path, counter name (prefixed `cloudflare/`), handler]. */
const ROUTES = [
  ['GET', '/api/ping', 'ping', ping],
  ['GET', '/api/version', 'version', version],
  ['POST', '/api/session/create', 'session/create', createSession],
  ['POST', '/api/execute', 'execute', execute],
  ['POST', '/api/execute/stream', 'execute/stream', executeStream],
  ['POST', '/api/write', 'write', writeFile],
  ['POST', '/api/read', 'read', readFile],
  ['POST', '/api/mkdir', 'mkdir', mkdir],
  ['POST', '/api/delete', 'delete', deleteFile],
  ['POST', '/api/exists', 'exists', exists],
];

/** The background process routes (cloudflare-processes.mjs) over the same command starter. */
const PROCESS_ROUTES = processRoutes({ start: startCommand, timeoutOf });

const PREFIX = /^\/cloudflare\/([^/]+)(\/.*)?$/;

/**
 * Finds the route of `/cloudflare/<containerId><containerPath>`: `{ name, containerId, handler,
 * opensBox }` (whether the container's Box is opened, created on first use) with `handler` null for an unknown container path (answered 404 `UNKNOWN_ERROR`, §4.1), or null
 * when the path is not a container path at all. `DELETE /cloudflare/<id>` is `destroy`; any other
 * GET outside `/api` is `root` (readiness probes, §4.3 `GET /`).
 */
export function matchCloudflareRoute(method, pathname) {
  const found = PREFIX.exec(pathname);
  if (!found || !CONTAINER_ID.test(found[1])) return null;
  const [, containerId, containerPath = ''] = found;
  if (containerPath === '') {
    // Host-level: removes the container's Box, never opens one.
    return method === 'DELETE' ? { name: 'cloudflare/destroy', containerId, handler: destroy, opensBox: false } : null;
  }
  for (const [m, p, name, handler] of ROUTES) {
    if (m === method && p === containerPath)
      return { name: `cloudflare/${name}`, containerId, handler, opensBox: true };
  }
  for (const [m, pattern, name, handler] of PROCESS_ROUTES) {
    const params = m === method && pattern.exec(containerPath);
    if (params) return { name: `cloudflare/${name}`, containerId, handler, opensBox: true, params: params.slice(1) };
  }
  if (method === 'GET' && containerPath !== '/api' && !containerPath.startsWith('/api/')) {
    return { name: 'cloudflare/root', containerId, handler: root, opensBox: true };
  }
  return { name: 'cloudflare/unknown', containerId, handler: null, opensBox: false };
}

/**
 * Answers one container request. `route` is from matchCloudflareRoute; `containers` the host's
 * CloudflareContainers. Every failure is a §4.1 error body.
 */
export async function handleCloudflare({ route, containers, req, res }) {
  try {
    if (!route.handler) {
      req.resume();
      throw new ContainerApiError(404, 'UNKNOWN_ERROR', 'The requested endpoint was not found');
    }
    const container = route.opensBox ? await containers.open(route.containerId) : null;
    await route.handler({
      containers,
      container,
      containerId: route.containerId,
      req,
      res,
      params: route.params ?? [],
    });
  } catch (err) {
    req.resume();
    sendContainerError(res, err);
  }
}

async function destroy({ containers, res, containerId }) {
  const destroyed = await containers.destroy(containerId);
  sendContainerJson(res, { id: containerId, destroyed });
}

async function root({ res }) {
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.end('Hello from the local Box host\n');
}

async function ping({ res }) {
  sendContainerJson(res, { status: 'healthy' });
}

async function version({ res }) {
  sendContainerJson(res, { version: CONTAINER_API_VERSION });
}

function optionalString(body, key) {
  const value = body[key];
  if (value !== undefined && (typeof value !== 'string' || value === '')) {
    throw new ContainerApiError(400, 'VALIDATION_FAILED', `${key} must be a non-empty string`);
  }
  return value;
}

async function createSession({ containers, container, req, res }) {
  const body = await readJson(req);
  const id = optionalString(body, 'id') ?? `session-${Date.now()}`;
  const cwd = normalizeBoxPath(optionalString(body, 'cwd') ?? CONTAINER_WORK_DIR, CONTAINER_WORK_DIR);
  containers.createSession(container, { id, env: containerEnv(body.env), cwd });
  sendContainerJson(res, { id, data: { id }, containerPlacementId: null });
}

/**
 * Starts `bash -c <command>` in the container's Box: `{ cmd, command, sessionId (null when
 * sessionless), startedAt (ms) }`. The session (created on first use) gives the default env and
 * cwd; the request's `env` and `cwd` (relative to the session cwd) override them (§4.2, §4.3).
 */
async function startCommand(containers, container, req, body) {
  const command = body.command;
  if (typeof command !== 'string' || command.trim() === '' || command.includes('\0')) {
    throw new ContainerApiError(400, 'VALIDATION_FAILED', 'command must be a non-empty string');
  }
  if (body.background === true) {
    throw new ContainerApiError(
      400,
      'VALIDATION_FAILED',
      'background execution is not supported by the local Box host',
    );
  }
  const header = req.headers['x-session-id'];
  const named =
    optionalString(body, 'sessionId') ?? (typeof header === 'string' && header !== '' ? header : DEFAULT_SESSION);
  const session = named === NO_SESSION ? null : containers.sessionOf(container, named);
  const baseCwd = session?.cwd ?? CONTAINER_WORK_DIR;
  const cwd = normalizeBoxPath(optionalString(body, 'cwd') ?? baseCwd, baseCwd);
  const env = { ...session?.env, ...containerEnv(body.env) };
  const { box } = container;
  const cmd = await box.startCommand({ command: 'bash', args: ['-c', command], cwd, env });
  // A running command keeps its container alive (as an in-flight request keeps the DO's); a
  // finished one is forgotten by its Box: a container lives long, its history must not grow.
  const renew = setInterval(() => box.keepAliveFor(CONTAINER_IDLE_MS), RENEW_EVERY_MS);
  renew.unref();
  cmd.once('exit', () => {
    clearInterval(renew);
    box.commands.delete(cmd.id);
  });
  return { cmd, command, sessionId: session?.id ?? null, startedAt: Date.now() };
}

function timeoutOf(body) {
  const { timeoutMs } = body;
  if (timeoutMs === undefined || timeoutMs === null || timeoutMs === 0) return undefined;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new ContainerApiError(400, 'VALIDATION_FAILED', 'timeoutMs must be a positive number of ms');
  }
  return timeoutMs;
}

/** Kills the command when the client goes away before it finished (nobody can read its result). */
function killOnHangUp(res, cmd) {
  res.on('close', () => {
    if (cmd.running) {
      cmd.resumeOutput();
      cmd.killAll().catch(() => {});
    }
  });
}

function output(cmd, stream) {
  return cmd.logs
    .filter((entry) => entry.stream === stream)
    .map((entry) => entry.data)
    .join('');
}

async function execute({ containers, container, req, res }) {
  const body = await readJson(req);
  const timeoutMs = timeoutOf(body);
  const run = await startCommand(containers, container, req, body);
  const { cmd } = run;
  killOnHangUp(res, cmd);
  let timedOut = false;
  const timer =
    timeoutMs === undefined
      ? null
      : setTimeout(() => {
          timedOut = true;
          cmd.killAll().catch(() => {});
        }, timeoutMs);
  const code = await cmd.waitExit();
  clearTimeout(timer);
  container.box.keepAliveFor(CONTAINER_IDLE_MS);
  if (timedOut && run.sessionId !== null) {
    // Session mode (§6.4): an error, no result. The process tree is killed here all the same.
    throw new ContainerApiError(
      500,
      'COMMAND_EXECUTION_ERROR',
      `Failed to execute command '${run.command}' in session '${run.sessionId}': Command timeout after ${timeoutMs}ms`,
      { command: run.command, sessionId: run.sessionId },
    );
  }
  const exitCode = timedOut ? 124 : code;
  let stderr = output(cmd, 'stderr');
  if (timedOut)
    stderr += `${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}Command timed out after ${timeoutMs}ms\n`;
  const result = {
    success: exitCode === 0,
    exitCode,
    stdout: output(cmd, 'stdout'),
    stderr,
    command: run.command,
    duration: Date.now() - run.startedAt,
  };
  if (run.sessionId !== null) result.sessionId = run.sessionId;
  sendContainerJson(res, result);
}

async function executeStream({ containers, container, req, res }) {
  const body = await readJson(req);
  const run = await startCommand(containers, container, req, body);
  const { cmd } = run;
  const sse = startSse(res);
  killOnHangUp(res, cmd);
  sse.send({ type: 'start', command: run.command });
  let waiting = false;
  const onLog = ({ stream, data }) => {
    if (sse.send({ type: stream, data }) || waiting) return;
    // A slow reader: stop reading the command's pipes (it blocks on write) until the socket drains.
    waiting = true;
    cmd.pauseOutput();
    sse.onDrain(() => {
      waiting = false;
      cmd.resumeOutput();
    });
  };
  cmd.on('log', onLog);
  const exitCode = await cmd.waitExit();
  cmd.off('log', onLog);
  container.box.keepAliveFor(CONTAINER_IDLE_MS);
  sse.send({ type: 'complete', exitCode });
  sse.end();
}
