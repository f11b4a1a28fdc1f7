// Background processes of the Cloudflare container control API (protocol note §4.3, §4.4;
// `@cloudflare/sandbox` 0.12.10 `ProcessClient`): `POST /api/process/start`, `GET
// /api/process/list`, `GET /api/process/{id}`, `GET /api/process/{id}/logs`, `GET
// /api/process/{id}/stream` (SSE: `process_info`, the output so far then live `stdout`/`stderr`,
// `exit`), `DELETE /api/process/{id}` (kill) and `DELETE /api/process/kill-all`. A process is one
// Box command (`bash -c`), remembered by the container while it runs and for a while after.
import { randomBytes } from 'node:crypto';
import { ContainerApiError, sendContainerJson } from './cloudflare-errors.mjs';
import { readJson } from './http-io.mjs';
import { startSse } from './sse.mjs';

/** Processes remembered per container; the oldest finished ones are forgotten first. */
const MAX_PROCESSES = 1024;
/** A process id: what `processId` may be (the default is `proc_<ms>_<rand6>`). */
const PROCESS_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `proc_<ms>_<rand6>`, the container's default id form. */
function newProcessId() {
  return `proc_${Date.now()}_${randomBytes(3).toString('hex')}`;
}

function processesOf(container) {
  container.processes ??= new Map();
  return container.processes;
}

/** `running`, then `completed` (exit 0), `failed` (another code) or `killed` (by DELETE). */
function statusOf(process) {
  if (process.cmd.running) return 'running';
  if (process.killed) return 'killed';
  return process.cmd.exitCode === 0 ? 'completed' : 'failed';
}

/** The process wire object (`ProcessInfoResult.process`). */
function describe(process) {
  const { cmd } = process;
  const json = {
    id: process.id,
    pid: cmd.pid,
    command: process.command,
    status: statusOf(process),
    startTime: new Date(cmd.startedAt).toISOString(),
  };
  if (!cmd.running) {
    json.endTime = new Date(cmd.finishedAt ?? Date.now()).toISOString();
    json.exitCode = cmd.exitCode;
  }
  return json;
}

function processOf(container, id) {
  const process = processesOf(container).get(id);
  if (!process) throw new ContainerApiError(404, 'PROCESS_NOT_FOUND', `Process not found: ${id}`, { processId: id });
  return process;
}

function forgetFinished(processes) {
  for (const [id, process] of processes) {
    if (processes.size < MAX_PROCESSES) return;
    if (!process.cmd.running) processes.delete(id);
  }
  if (processes.size >= MAX_PROCESSES) {
    throw new ContainerApiError(
      503,
      'CONTAINER_UNAVAILABLE',
      `a container runs at most ${MAX_PROCESSES} processes here`,
    );
  }
}

/**
 * The routes, given the command starter of cloudflare-api.mjs (`start(containers, container, req,
 * body) → { cmd, command }`, which also applies the session, env, cwd and keep-alive rules) and its
 * timeout reader.
 */
export function processRoutes({ start, timeoutOf }) {
  async function startProcess({ containers, container, req, res }) {
    const body = await readJson(req);
    const id = body.processId ?? newProcessId();
    if (typeof id !== 'string' || !PROCESS_ID.test(id)) {
      throw new ContainerApiError(400, 'VALIDATION_FAILED', 'processId must match [A-Za-z0-9][A-Za-z0-9._-]*');
    }
    const processes = processesOf(container);
    if (processes.get(id)?.cmd.running) {
      throw new ContainerApiError(409, 'PROCESS_ERROR', `Process ${id} is already running`, { processId: id });
    }
    const timeoutMs = timeoutOf(body);
    forgetFinished(processes);
    const { cmd, command } = await start(containers, container, req, { ...body, background: undefined });
    const process = { id, cmd, command, killed: false };
    processes.delete(id);
    processes.set(id, process);
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => cmd.killAll().catch(() => {}), timeoutMs);
      timer.unref();
      cmd.once('exit', () => clearTimeout(timer));
    }
    sendContainerJson(res, { processId: id, pid: cmd.pid, command });
  }

  async function list({ container, res }) {
    sendContainerJson(res, { processes: [...processesOf(container).values()].map(describe) });
  }

  async function get({ container, res, params: [id] }) {
    sendContainerJson(res, { process: describe(processOf(container, id)) });
  }

  async function logs({ container, res, params: [id] }) {
    const { cmd } = processOf(container, id);
    const text = (stream) =>
      cmd.logs
        .filter((entry) => entry.stream === stream)
        .map((entry) => entry.data)
        .join('');
    sendContainerJson(res, { processId: id, stdout: text('stdout'), stderr: text('stderr') });
  }

  async function stream({ container, res, params: [id] }) {
    const process = processOf(container, id);
    const { cmd } = process;
    const sse = startSse(res);
    sse.send({ type: 'process_info', processId: id, command: process.command, status: statusOf(process) });
    let waiting = false;
    const onLog = ({ stream: name, data }) => {
      if (sse.send({ type: name, data, processId: id }) || waiting) return;
      // A slow reader holds the command's pipes (it blocks on write) until the socket drains.
      waiting = true;
      cmd.pauseOutput();
      sse.onDrain(() => {
        waiting = false;
        cmd.resumeOutput();
      });
    };
    for (const entry of cmd.logs) onLog(entry);
    if (cmd.running) {
      cmd.on('log', onLog);
      res.on('close', () => {
        cmd.off('log', onLog);
        if (waiting) cmd.resumeOutput();
      });
      await cmd.waitExit();
      cmd.off('log', onLog);
    }
    const status = statusOf(process);
    sse.send({
      type: 'exit',
      processId: id,
      exitCode: cmd.exitCode,
      data: `Process ${status} with exit code ${cmd.exitCode}`,
    });
    sse.end();
  }

  async function kill({ container, res, params: [id] }) {
    const process = processOf(container, id);
    if (process.cmd.running) {
      process.killed = true;
      process.cmd.signal('SIGTERM');
    }
    sendContainerJson(res, { processId: id });
  }

  async function killAll({ container, res }) {
    let cleanedCount = 0;
    for (const process of processesOf(container).values()) {
      if (!process.cmd.running) continue;
      process.killed = true;
      process.cmd.signal('SIGTERM');
      cleanedCount += 1;
    }
    sendContainerJson(res, { cleanedCount });
  }

  /** [method, container path pattern, counter name, handler]; checked before the exact routes. */
  return /** @type {const} */ ([
    ['POST', /^\/api\/process\/start$/, 'process/start', startProcess],
    ['GET', /^\/api\/process\/list$/, 'process/list', list],
    ['DELETE', /^\/api\/process\/kill-all$/, 'process/kill-all', killAll],
    ['GET', /^\/api\/process\/([^/]+)\/logs$/, 'process/logs', logs],
    ['GET', /^\/api\/process\/([^/]+)\/stream$/, 'process/stream', stream],
    ['GET', /^\/api\/process\/([^/]+)$/, 'process/get', get],
    ['DELETE', /^\/api\/process\/([^/]+)$/, 'process/kill', kill],
  ]);
}
