// The Vercel Sandbox REST subset spoken by `@vercel/sandbox` 3.5.0 (protocol note §7): route table
// and handlers over the Box registry. Every route has a name, used by the request counters.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { startNdjson } from './ndjson.mjs';
import { HttpError, MAX_ARCHIVE_BYTES, readBody, readJson, sendJson } from './http-io.mjs';
import { MAX_TIMER_MS } from '../engine/box.mjs';
import { StdinTimeout, StdinUnavailable } from '../engine/command.mjs';
import { snapshotJSON } from '../engine/snapshots.mjs';
import { listSandboxes, updateNetworkPolicy } from './vercel-network.mjs';

const SID = '([A-Za-z0-9_-]+)';
const S = `^/v2/sandboxes/sessions/${SID}`;

/**
 * A route's handler: `params` are the pattern's groups, `query` the request's search params.
 * @typedef {(request: {
 *   registry: import('../engine/registry.mjs').BoxRegistry,
 *   req: import('node:http').IncomingMessage,
 *   res: import('node:http').ServerResponse,
 *   params: string[],
 *   query: URLSearchParams,
 * }) => Promise<void>} RouteHandler
 */

/**
 * [method, pattern, route name, handler]; first match wins.
 * @type {[string, RegExp, string, RouteHandler][]}
 */
const ROUTES = [
  ['POST', /^\/v[23]\/sandboxes$/, 'create', create],
  ['GET', new RegExp(`${S}$`), 'session/get', getSession],
  ['POST', new RegExp(`${S}/stop$`), 'stop', stop],
  ['POST', new RegExp(`${S}/extend-timeout$`), 'extend-timeout', extendTimeout],
  ['POST', new RegExp(`${S}/network-policy$`), 'network-policy', updateNetworkPolicy],
  ['POST', new RegExp(`${S}/cmd$`), 'cmd', runCommand],
  ['GET', new RegExp(`${S}/cmd/${SID}/logs$`), 'cmd/logs', commandLogs],
  ['POST', new RegExp(`${S}/cmd/${SID}/kill$`), 'cmd/kill', killCommand],
  ['POST', new RegExp(`${S}/cmd/${SID}/stdin$`), 'cmd/stdin', commandStdin],
  ['GET', new RegExp(`${S}/cmd/${SID}$`), 'cmd/get', getCommand],
  ['POST', new RegExp(`${S}/fs/write$`), 'fs/write', writeFiles],
  ['POST', new RegExp(`${S}/fs/read$`), 'fs/read', readFile],
  ['POST', new RegExp(`${S}/fs/mkdir$`), 'fs/mkdir', mkdir],
  ['POST', new RegExp(`${S}/snapshot$`), 'snapshot', takeSnapshot],
  ['GET', /^\/v2\/sandboxes\/snapshots$/, 'snapshots/list', listSnapshots],
  ['GET', /^\/v2\/sandboxes\/snapshots\/([A-Za-z0-9_-]+)$/, 'snapshots/get', getSnapshot],
  ['DELETE', /^\/v2\/sandboxes\/snapshots\/([A-Za-z0-9_-]+)$/, 'snapshots/delete', deleteSnapshot],
  ['GET', /^\/v2\/sandboxes$/, 'sandbox/list', listSandboxes],
  ['GET', /^\/v2\/sandboxes\/(?!sessions$|snapshots$|drives$)([^/]+)$/, 'sandbox/get', getSandbox],
];

/** Finds the route of a request: `{ name, params, handler }` or null. `cmd/get` with `?wait=true` is `cmd/wait`. */
export function matchRoute(method, pathname, query) {
  for (const [m, pattern, name, handler] of ROUTES) {
    const found = method === m && pattern.exec(pathname);
    if (found) {
      const routeName = name === 'cmd/get' && query.get('wait') === 'true' ? 'cmd/wait' : name;
      return { name: routeName, params: found.slice(1), handler };
    }
  }
  return null;
}

function both(box) {
  return { sandbox: box.sandboxJSON(), session: box.sessionJSON(), routes: [] };
}

/** @type {RouteHandler} */
async function create({ registry, req, res }) {
  const body = await readJson(req);
  // A create waiting for a Box slot leaves the queue when its client goes away.
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const box = await registry.create(body, { signal: gone.signal });
  if (res.destroyed) {
    await box.stop();
    return;
  }
  sendJson(res, 200, both(box));
}

/** @type {RouteHandler} */
async function getSession({ registry, res, params: [sid] }) {
  const box = registry.bySession(sid);
  if (!box) registry.running(sid);
  sendJson(res, 200, { session: box.sessionJSON(), routes: [] });
}

/** @type {RouteHandler} */
async function getSandbox({ registry, res, params: [encoded] }) {
  let name;
  try {
    name = decodeURIComponent(encoded);
  } catch {
    throw new HttpError(400, 'bad_request', 'malformed sandbox name');
  }
  const box = registry.byName(name);
  if (!box) throw new HttpError(404, 'not_found', `Sandbox ${name} was not found`);
  sendJson(res, 200, both(box));
}

/** @type {RouteHandler} */
async function stop({ registry, res, params: [sid] }) {
  const box = registry.running(sid);
  await box.stop();
  sendJson(res, 200, { session: box.sessionJSON(), sandbox: box.sandboxJSON() });
}

/** @type {RouteHandler} */
async function extendTimeout({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const { duration } = await readJson(req);
  if (!(Number.isFinite(duration) && duration > 0 && duration <= MAX_TIMER_MS)) {
    throw new HttpError(400, 'bad_request', `duration must be a positive number of ms up to ${MAX_TIMER_MS}`);
  }
  box.extendTimeout(duration);
  sendJson(res, 200, { session: box.sessionJSON() });
}

/**
 * Replays a command's output, then follows it; `onExit` runs once it has exited. A slow reader
 * pauses the command's output (it blocks on its next write) instead of growing the socket buffer.
 */
function follow(cmd, res, onLog, onExit, out) {
  for (const entry of cmd.logs) onLog(entry);
  if (out) {
    let waiting = false;
    const write = onLog;
    onLog = (entry) => {
      if (write(entry) !== false || waiting) return;
      waiting = true;
      cmd.pauseOutput();
      out.onDrain(() => {
        waiting = false;
        cmd.resumeOutput();
      });
    };
    res.on('close', () => {
      if (waiting) cmd.resumeOutput();
    });
  }
  if (!cmd.running) return onExit();
  const exited = () => {
    cmd.off('log', onLog);
    onExit();
  };
  cmd.on('log', onLog);
  cmd.once('exit', exited);
  res.on('close', () => {
    cmd.off('log', onLog);
    cmd.off('exit', exited);
  });
}

/** @type {RouteHandler} */
async function runCommand({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const body = await readJson(req);
  const cmd = await box.startCommand(body);
  if (body.wait !== true) {
    sendJson(res, 200, { command: cmd.toJSON() });
    return;
  }
  const out = startNdjson(res);
  out.line({ command: { ...cmd.toJSON(), exitCode: null } });
  const onLog = body.logs === false ? () => {} : (entry) => out.line(entry);
  follow(
    cmd,
    res,
    onLog,
    () => {
      out.line({ command: cmd.toJSON() });
      out.end();
    },
    out,
  );
}

function commandOf(registry, sid, cid) {
  const cmd = registry.running(sid).commands.get(cid);
  if (!cmd) throw new HttpError(404, 'not_found', `Command ${cid} was not found`);
  return cmd;
}

/** @type {RouteHandler} */
async function getCommand({ registry, res, query, params: [sid, cid] }) {
  const cmd = commandOf(registry, sid, cid);
  if (query.get('wait') !== 'true' || !cmd.running) {
    sendJson(res, 200, { command: cmd.toJSON() });
    return;
  }
  // Long-poll: headers now (the SDK's 300 s header timeout), body at exit.
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.flushHeaders();
  await cmd.waitExit();
  res.end(JSON.stringify({ command: cmd.toJSON() }));
}

/** @type {RouteHandler} */
async function commandLogs({ registry, res, params: [sid, cid] }) {
  const cmd = commandOf(registry, sid, cid);
  const out = startNdjson(res);
  follow(
    cmd,
    res,
    (entry) => out.line(entry),
    () => out.end(),
    out,
  );
}

/** @type {RouteHandler} */
async function killCommand({ registry, req, res, params: [sid, cid] }) {
  const cmd = commandOf(registry, sid, cid);
  const { signal = 15 } = await readJson(req);
  if (!Number.isInteger(signal) || signal < 1 || signal > 64) {
    throw new HttpError(400, 'bad_request', 'signal must be a signal number');
  }
  cmd.signal(signal);
  sendJson(res, 200, { command: cmd.toJSON() });
}

/** A stdin write the command does not read within this time is refused (ms; the SDK's 30 s). */
const STDIN_WRITE_TIMEOUT_MS = 30_000;

/**
 * `POST …/cmd/{cmdId}/stdin`, body `{ data?: string (base64), close?: boolean, offset?: number }`
 * (REST "Write to command stdin": the command was started with `attachStdin: true`): writes
 * `data`'s bytes in order, then closes stdin when `close`. With `offset` (bytes of stdin before
 * `data`), bytes the command already took are skipped and an offset past them is 409. Answers
 * `{ bytesWritten }` (total bytes taken so far). 400 `command_stdin_unavailable` for a command
 * without an open stdin; 404 `command_not_found_or_exited` once it has exited; 504 when it does
 * not read within 30 s.
 * @type {RouteHandler}
 */
async function commandStdin({ registry, req, res, params: [sid, cid] }) {
  const cmd = commandOf(registry, sid, cid);
  const { data, close = false, offset } = await readJson(req);
  if (data !== undefined && (typeof data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(data))) {
    throw new HttpError(400, 'bad_request', 'data must be a base64 string');
  }
  if (typeof close !== 'boolean') throw new HttpError(400, 'bad_request', 'close must be a boolean');
  if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) {
    throw new HttpError(400, 'bad_request', 'offset must be a non-negative integer (bytes)');
  }
  let bytes = data === undefined ? Buffer.alloc(0) : Buffer.from(data, 'base64');
  if (offset !== undefined) {
    if (offset > cmd.stdinBytes) {
      throw new HttpError(409, 'stdin_offset_gap', `offset ${offset} is past the ${cmd.stdinBytes} bytes written`);
    }
    bytes = bytes.subarray(Math.min(bytes.length, cmd.stdinBytes - offset));
  }
  try {
    if (bytes.length > 0) await cmd.writeStdin(bytes, STDIN_WRITE_TIMEOUT_MS);
    else if (!close && cmd.stdinClosed) throw new StdinUnavailable(cmd);
    if (close) cmd.closeStdin();
  } catch (err) {
    if (err instanceof StdinTimeout) throw new HttpError(504, 'stdin_timeout', err.message);
    if (err instanceof StdinUnavailable) {
      if (err.exited) throw new HttpError(404, 'command_not_found_or_exited', err.message);
      throw new HttpError(400, 'command_stdin_unavailable', err.message);
    }
    throw err;
  }
  sendJson(res, 200, { bytesWritten: cmd.stdinBytes });
}

/** @type {RouteHandler} */
async function writeFiles({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const body = await readBody(req, MAX_ARCHIVE_BYTES);
  const cwd = req.headers['x-cwd'];
  await box.writeArchive(typeof cwd === 'string' && cwd !== '' ? cwd : '/', body);
  sendJson(res, 200, {});
}

/** @type {RouteHandler} */
async function readFile({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const { path, cwd } = await readJson(req);
  if (cwd !== undefined && typeof cwd !== 'string') throw new HttpError(400, 'bad_request', 'cwd must be a string');
  const file = box.openForRead(path, cwd);
  if (!file) throw new HttpError(404, 'file_not_found', `File ${path} was not found`);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.size });
  await pipeline(fs.createReadStream(null, { fd: file.fd }), res);
}

/** @type {RouteHandler} */
async function mkdir({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const { path, cwd } = await readJson(req);
  if (cwd !== undefined && typeof cwd !== 'string') throw new HttpError(400, 'bad_request', 'cwd must be a string');
  box.mkdir(path, cwd);
  sendJson(res, 200, {});
}

/**
 * `POST …/snapshot` (body empty or `{ expiration: ms }`, 0 = never): stops the session and keeps
 * its work directory as a snapshot (protocol note §7.5: the session is stopped by the snapshot).
 * @type {RouteHandler}
 */
async function takeSnapshot({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const body = await readBody(req, 64 * 1024);
  let expiration;
  if (body.length > 0) {
    let parsed;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new HttpError(400, 'bad_request', 'body must be JSON');
    }
    expiration = parsed?.expiration;
    if (expiration !== undefined && !(Number.isInteger(expiration) && expiration >= 0)) {
      throw new HttpError(400, 'bad_request', 'expiration must be a non-negative integer of ms (0 = never)');
    }
  }
  const record = await box.stop((stopping) =>
    registry.snapshots.take(stopping.workDirHost, {
      sourceSessionId: stopping.id,
      sandboxName: stopping.name,
      expiration,
    }),
  );
  sendJson(res, 200, { snapshot: snapshotJSON(record), session: box.sessionJSON() });
}

/**
 * `GET /v2/sandboxes/snapshots?name&limit&cursor&sortOrder` (`name`: the source sandbox's name).
 * @type {RouteHandler}
 */
async function listSnapshots({ registry, res, query }) {
  const limit = query.has('limit') ? Number(query.get('limit')) : 100;
  const offset = query.has('cursor') ? Number(query.get('cursor')) : 0;
  if (!(Number.isInteger(limit) && limit > 0) || !(Number.isInteger(offset) && offset >= 0)) {
    throw new HttpError(400, 'bad_request', 'limit must be a positive integer and cursor one this host returned');
  }
  const sortOrder = query.get('sortOrder') === 'asc' ? 'asc' : 'desc';
  const all = await registry.snapshots.list({ name: query.get('name') ?? undefined, sortOrder });
  const page = all.slice(offset, offset + limit);
  const next = offset + limit < all.length ? String(offset + limit) : null;
  sendJson(res, 200, { snapshots: page.map((r) => snapshotJSON(r)), pagination: { count: page.length, next } });
}

/** @type {RouteHandler} */
async function getSnapshot({ registry, res, params: [id] }) {
  const record = await registry.snapshots.get(id);
  if (!record) throw new HttpError(404, 'not_found', `Snapshot ${id} was not found`);
  sendJson(res, 200, { snapshot: snapshotJSON(record) });
}

/** @type {RouteHandler} */
async function deleteSnapshot({ registry, res, params: [id] }) {
  const record = await registry.snapshots.delete(id);
  if (!record) throw new HttpError(404, 'not_found', `Snapshot ${id} was not found`);
  sendJson(res, 200, { snapshot: snapshotJSON(record, 'deleted') });
}
