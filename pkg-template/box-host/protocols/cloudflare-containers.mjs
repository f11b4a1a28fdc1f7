// The Cloudflare containers of one Box host: one container id = one Box (protocol note §1.2: each
// `Sandbox` Durable Object instance has its own container). A container's Box is created on the
// first request naming its id, kept alive while it is used (like the DO's `sleepAfter`), and
// removed by `DELETE /cloudflare/<id>` (the DO's `ctx.container.destroy()`), by its idle timeout or
// by the host's close. A later request on the same id starts a fresh, empty Box, as the DO does
// after `destroy()` (§6.6).
import { checkEnv } from '../engine/box.mjs';
import { ContainerApiError } from './cloudflare-errors.mjs';

/** The container's work directory and default cwd (§4.2: sessions start in `/workspace`). */
export const CONTAINER_WORK_DIR = '/workspace';
/** Idle lifetime of a container's Box (ms): the SDK's default `sleepAfter` of 10 minutes (§6.2). */
export const CONTAINER_IDLE_MS = 10 * 60_000;
/** A container id: what the DO-side forwarder puts in the path (the DO id is 64 hex digits). */
export const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Sessions remembered per container (a session is only its env and cwd here). */
const MAX_SESSIONS = 1024;

/** A container session: `{ id, env, cwd }`, the defaults of the commands that name it (§4.2). */
function session(id, env = {}, cwd = CONTAINER_WORK_DIR) {
  return { id, env, cwd };
}

/** Cloudflare env values may be undefined (unset); the Box takes strings only. */
export function containerEnv(env) {
  if (env === undefined || env === null) return {};
  if (typeof env !== 'object' || Array.isArray(env)) {
    throw new ContainerApiError(400, 'VALIDATION_FAILED', 'env must be an object of strings');
  }
  return checkEnv(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)));
}

export class CloudflareContainers {
  /** `registry`: the host's BoxRegistry (shared capacity, isolation, stop on close). */
  constructor(registry) {
    this.registry = registry;
    this.containers = new Map();
  }

  /**
   * The container of `id` (`{ box, sessions }`), its Box created on first use (or after its Box
   * stopped). Renews the idle lifetime. Rejects with 503 `CONTAINER_UNAVAILABLE` at capacity.
   */
  async open(id) {
    let entry = this.containers.get(id);
    if (entry?.box && !entry.box.running) {
      this.containers.delete(id);
      entry = undefined;
    }
    if (!entry) {
      entry = { ready: this.#createBox(), box: null, sessions: new Map() };
      this.containers.set(id, entry);
      entry.ready.catch(() => {
        if (this.containers.get(id) === entry) this.containers.delete(id);
      });
    }
    entry.box = await entry.ready;
    entry.box.keepAliveFor(CONTAINER_IDLE_MS);
    return entry;
  }

  #createBox() {
    // The Cloudflare SDK retries a container that cannot start: no queue on this side.
    return this.registry.create({ timeout: CONTAINER_IDLE_MS }, { workDir: CONTAINER_WORK_DIR, queue: false });
  }

  /** Removes the container's Box (every process tree killed, directory removed); false if none. */
  async destroy(id) {
    const entry = this.containers.get(id);
    if (!entry) return false;
    this.containers.delete(id);
    const box = await entry.ready.catch(() => null);
    if (!box) return false;
    await box.stop();
    return true;
  }

  /** Records a new session (§4.3 `/api/session/create`); 409 `SESSION_ALREADY_EXISTS` if known. */
  createSession(entry, { id, env, cwd }) {
    if (entry.sessions.has(id)) {
      throw new ContainerApiError(409, 'SESSION_ALREADY_EXISTS', `Session '${id}' already exists`, {
        sessionId: id,
        containerPlacementId: null,
      });
    }
    return this.#remember(entry, session(id, env, cwd));
  }

  /** The session named `id`, created on first use with the defaults (§4.2). */
  sessionOf(entry, id) {
    return entry.sessions.get(id) ?? this.#remember(entry, session(id));
  }

  #remember(entry, value) {
    if (entry.sessions.size >= MAX_SESSIONS) {
      throw new ContainerApiError(
        503,
        'CONTAINER_UNAVAILABLE',
        `a container keeps at most ${MAX_SESSIONS} sessions here`,
      );
    }
    entry.sessions.set(value.id, value);
    return value;
  }
}
