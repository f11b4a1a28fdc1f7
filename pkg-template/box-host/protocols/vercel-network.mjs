// The Vercel routes of a running Box's network policy and of finding Boxes again:
// `POST /v2/sandboxes/sessions/{id}/network-policy` (the SDK's `updateNetworkPolicy`) and
// `GET /v2/sandboxes` (`Sandbox.list`), as @vercel/sandbox 3.5.0 sends them (protocol note §7.1,
// §7.2; shapes in its dist/api-client/validators.js). `GET /v2/sandboxes/{name}` (`Sandbox.get`)
// is vercel-api.mjs's.
import { HttpError, readJson, sendJson } from './http-io.mjs';
import { applyNetworkPolicy } from '../engine/network-policy.mjs';

/** Most sandboxes of one list page (`limit`; the default when absent is 50). */
const MAX_PAGE = 100;

/** @type {import('./vercel-api.mjs').RouteHandler} */
export async function updateNetworkPolicy({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  await applyNetworkPolicy(registry, box, await readJson(req));
  sendJson(res, 200, { session: box.sessionJSON() });
}

/**
 * The host's Boxes (live, then the stopped ones it remembers), `sortBy` `createdAt` (default) or
 * `name`, `sortOrder` `desc` (default) or `asc`, `namePrefix`, pages of `limit` (1–100) from
 * `cursor` (the `next` of the page before). `project` and `tags` are accepted and ignored: one
 * host is one project without tags.
 * @type {import('./vercel-api.mjs').RouteHandler}
 */
export async function listSandboxes({ registry, res, query }) {
  const limit = query.has('limit') ? Number(query.get('limit')) : 50;
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE)) {
    throw new HttpError(400, 'bad_request', `limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  const sortBy = query.get('sortBy') ?? 'createdAt';
  if (!['createdAt', 'name', 'statusUpdatedAt'].includes(sortBy)) {
    throw new HttpError(400, 'bad_request', 'sortBy must be createdAt, name or statusUpdatedAt');
  }
  const order = query.get('sortOrder') ?? 'desc';
  if (!['asc', 'desc'].includes(order)) throw new HttpError(400, 'bad_request', 'sortOrder must be asc or desc');
  const start = query.has('cursor') ? Number(query.get('cursor')) : 0;
  if (!(Number.isInteger(start) && start >= 0)) throw new HttpError(400, 'bad_request', 'malformed cursor');
  const prefix = query.get('namePrefix') ?? '';
  const key = (box) =>
    sortBy === 'name' ? box.name : sortBy === 'statusUpdatedAt' ? (box.stoppedAt ?? box.createdAt) : box.createdAt;
  const boxes = [...registry.live.values(), ...registry.stopped.values()]
    .filter((box) => box.name.startsWith(prefix))
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      const compared = x < y ? -1 : x > y ? 1 : 0;
      return order === 'asc' ? compared : -compared;
    });
  const page = boxes.slice(start, start + limit);
  const next = start + limit < boxes.length ? String(start + limit) : null;
  sendJson(res, 200, {
    sandboxes: page.map((box) => box.sandboxJSON()),
    pagination: { count: boxes.length, next },
  });
}
