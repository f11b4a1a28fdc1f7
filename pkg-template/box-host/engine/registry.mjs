// The Box registry of one host: live Boxes by session id, a bounded memory of stopped ones (so
// their sessions can still be described), names, and the live-Box capacity.
import {
  Box,
  BoxRequestError,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMER_MS,
  SESSION_CWD,
  boxMemoryBytes,
  checkEnv,
} from './box.mjs';
import { BoxSlots, DEFAULT_MEMORY_REQUEST_BYTES, QueueRefused } from './box-queue.mjs';
import { LogBudget, outOfFds } from './command.mjs';
import { BoxSpares, removeBoxInMakingNow } from './box-spares.mjs';
import { ParkedBoxes, SPARE_MEMORY_BYTES } from './parked-boxes.mjs';
import { executionAuthority } from './isolation.mjs';
import { HOST_NETWORK_REACH, isolationProblem, sharesHostNetwork } from './host-probe.mjs';
import { reachableByBoxUsers } from './box-user.mjs';
import { removeOwnBoxDirsNow } from './stale-boxes.mjs';

/** Stopped Boxes remembered for `GET` lookups (oldest forgotten first); they keep no output. */
const STOPPED_MEMORY = 256;
/** Command output kept for replay by all live Boxes together (bytes of text, 32 MiB). */
export const LOG_BUDGET_BYTES = 32 * 1024 * 1024;

function networkDenied(policy) {
  if (policy === undefined || policy === 'allow-all') return false;
  if (policy === 'deny-all') return true;
  if (policy && typeof policy === 'object' && !Array.isArray(policy)) {
    if (policy.mode === 'deny-all') return true;
    if (policy.mode === 'allow-all') return false;
  }
  throw new BoxRequestError(
    400,
    'bad_request',
    'networkPolicy must be "allow-all" or "deny-all" on the local Box host',
  );
}

/** The snapshot id of a create body's `source`, or undefined without one; other sources are 400. */
function snapshotSource(source) {
  if (source === undefined) return undefined;
  if (source && source.type === 'snapshot' && typeof source.snapshotId === 'string' && source.snapshotId !== '') {
    return source.snapshotId;
  }
  throw new BoxRequestError(
    400,
    'bad_request',
    'source must be { type: "snapshot", snapshotId } on the local Box host (git and tarball sources are not supported)',
  );
}

export class BoxRegistry {
  /** Resolves stopAll()'s wait once no create is in flight. */
  #madeAll;

  /**
   * `snapshots`: the host's SnapshotStore (create from `source: { type: 'snapshot' }`);
   * `diskBytes`: each Box's writable space (box-disk.mjs; default 1 GiB); `spares`: make a Box
   * network ahead of each create (box-spares.mjs); `parked` ({ size, idleMs }, bubblewrap only):
   * keep that many spare Boxes with a parked Node process (parked-boxes.mjs). `production`
   * with `shareHostNetwork` false: an `allow-all` Box that would share this machine's network
   * (no Box network here, host-probe.mjs sharesHostNetwork) is refused, unless `isolation` is
   * 'none' (plain processes, accepted explicitly with everything of this user).
   * `memoryRequestBytes`: what each Box counts against `maxTotalMemoryBytes` (its limit when
   * that is smaller; a spare counts SPARE_MEMORY_BYTES); `maxQueueWaitMs`: a bound on the wait
   * of a queued create shorter than its own `timeout` (default none).
   */
  constructor({
    boxRoot,
    isolation,
    maxBoxes,
    maxTotalMemoryBytes = Infinity,
    memoryRequestBytes = DEFAULT_MEMORY_REQUEST_BYTES,
    maxQueued,
    maxQueueWaitMs,
    features,
    snapshots,
    diskBytes,
    spares = false,
    parked,
    production = false,
    shareHostNetwork = false,
  }) {
    // Box users (a root host's Boxes, box-user.mjs) open their directories below the Box root.
    if (isolation === 'bubblewrap' && features?.boxUsers === true) reachableByBoxUsers(boxRoot);
    this.features = features;
    this.diskBytes = diskBytes;
    this.spares = spares ? new BoxSpares({ networks: isolation === 'bubblewrap' && Boolean(features?.netTool) }) : null;
    this.boxRoot = boxRoot;
    this.snapshots = snapshots;
    this.isolation = isolation;
    this.refusesHostNetwork =
      production && !shareHostNetwork && isolation !== 'none' && sharesHostNetwork(features ?? {}, isolation);
    this.maxBoxes = maxBoxes;
    this.memoryRequestBytes = memoryRequestBytes;
    this.live = new Map();
    /** Boxes being created (BoxInMaking, box-spares.mjs): not live yet, removed by removeAllNow too. */
    this.making = new Set();
    /** Set by stopAll(): creates are refused from then on. */
    this.closing = false;
    this.stopped = new Map();
    this.slots = new BoxSlots({
      capacity: maxBoxes,
      maxBytes: maxTotalMemoryBytes,
      maxQueued,
      maxWaitMs: maxQueueWaitMs,
    });
    this.logBudget = new LogBudget(LOG_BUDGET_BYTES);
    /** Runs whose harness was a parked process (counted when their Box stops). */
    this.handedOver = 0;
    this.parked =
      isolation === 'bubblewrap' && parked?.size > 0 && !this.refusesHostNetwork
        ? new ParkedBoxes({
            size: parked.size,
            idleMs: parked.idleMs,
            make: () => this.#makeParkedBox(parked.idleMs, parked.harness),
            wanted: () => this.slots.queued > 0,
          })
        : null;
    /**
     * Why no spare is kept although `parked.size` asks for some: 'isolation' (no bubblewrap: the
     * parked script is shown in the sandbox), 'network' (production refuses the spares' allow-all
     * Boxes here), or null.
     */
    this.parkingOff = isolation !== 'bubblewrap' ? 'isolation' : this.refusesHostNetwork ? 'network' : null;
    this.parked?.fill();
  }

  /**
   * A new spare Box (no name, env or snapshot; the default network policy, resources and work
   * directory) with a parked Node process, holding a slot of its own that counts SPARE_MEMORY_BYTES
   * (at most a Box's request); what kept it from one when no slot is free now (a spare never
   * waits for one, nor takes one a create waits for: 'queue', 'maxBoxes', 'memory', 'closing'). Its provider-side
   * lifetime outlasts its idle bound by a minute, so it ends even if the pool forgot it.
   * `harness`: the source its process imports before its handover (Box#park).
   */
  async #makeParkedBox(idleMs, harness) {
    if (this.closing) return 'closing';
    const spareBytes = Math.min(SPARE_MEMORY_BYTES, this.#requestBytes());
    if (!this.slots.tryAcquire(spareBytes)) return this.slots.limitedBy(spareBytes);
    const making = {};
    this.making.add(making);
    let box;
    try {
      box = await Box.create(this.boxRoot, {
        ...this.#boxOptions(making),
        networkDenied: false,
        env: {},
        timeoutMs: idleMs + 60_000,
        onStopped: () => this.slots.release(spareBytes),
      });
      making.box = box;
      box.chargeBytes = spareBytes;
      box.park(harness);
      return box;
    } catch (err) {
      if (box) await box.stop();
      else this.slots.release(spareBytes);
      throw err;
    } finally {
      this.making.delete(making);
      if (this.making.size === 0) this.#madeAll?.();
    }
  }

  /** The Box.create options every Box of this host gets; `making` is the BoxInMaking of the exit path. */
  #boxOptions(making) {
    return {
      isolation: this.isolation,
      logBudget: this.logBudget,
      features: this.features,
      diskBytes: this.diskBytes,
      spares: this.spares,
      making,
    };
  }

  /** What a Box of `vcpus` counts against the memory bound: the host's request, at most its limit. */
  #requestBytes(vcpus) {
    return Math.min(this.memoryRequestBytes, boxMemoryBytes(vcpus));
  }

  /**
   * Whether a create of `body` (checked) may take a spare Box: the default network policy,
   * resources and work directory, no env (a spare's process started without one).
   */
  #fitsSpare({ denied, vcpus, boxEnv, workDir }) {
    if (!this.parked || denied || (vcpus !== undefined && boxMemoryBytes(vcpus) !== boxMemoryBytes())) return false;
    return (workDir ?? SESSION_CWD) === SESSION_CWD && Object.keys(boxEnv).length === 0;
  }

  /**
   * The executionAuthority a Box created with `networkPolicy` gets (the rule of create, without
   * creating one): `GET /_vite-hub/execution-authority`. Throws the create's refusal, unless
   * `refusals: false` (what such a Box would get: the host's own description of itself).
   */
  executionAuthorityFor(networkPolicy, { refusals = true } = {}) {
    const denied = refusals ? this.#enforceableDenial(networkPolicy) : networkDenied(networkPolicy);
    return executionAuthority(
      this.isolation,
      denied,
      this.isolation === 'bubblewrap' && !denied && Boolean(this.features?.netTool),
    );
  }

  /**
   * Whether `networkPolicy` (a create's, or a running Box's new one: network-policy.mjs) cuts the
   * network off; throws what #enforceableDenial throws, the one rule of both.
   */
  networkDeniedBy(networkPolicy) {
    return this.#enforceableDenial(networkPolicy);
  }

  /**
   * Whether `networkPolicy` cuts the network off, refusing one this host cannot enforce: a
   * `deny-all` without isolation is a 503 `isolation_unavailable` naming what is missing
   * (SANDBOX_PROVIDER_UNAVAILABLE for the Run), never silently ignored; so is, in production, an
   * `allow-all` that would share this machine's network, unless `shareHostNetwork` accepts it.
   */
  #enforceableDenial(networkPolicy) {
    const denied = networkDenied(networkPolicy);
    if (denied && this.isolation === 'none') {
      const why = this.features ? isolationProblem(this.features) : null;
      throw new BoxRequestError(
        503,
        'isolation_unavailable',
        `networkPolicy 'deny-all' cannot be enforced: the local Box host runs Boxes without isolation${why ? ` (${why})` : ''}`,
      );
    }
    if (!denied && this.refusesHostNetwork) {
      const why =
        this.isolation === 'bubblewrap'
          ? this.features?.netProblem
          : `${this.isolation} gives Boxes no network of their own`;
      throw new BoxRequestError(
        503,
        'isolation_unavailable',
        `the local Box host refuses allow-all Boxes in production without a Box network: they would share this machine's network and reach ${HOST_NETWORK_REACH}${why ? ` (${why})` : ''}; use networkPolicy 'deny-all', install slirp4netns (with /dev/net/tun usable by this user), or set local: { shareHostNetwork: true } (configureSandbox or hubSandbox) to accept that explicitly`,
      );
    }
    return denied;
  }

  /**
   * Creates a Box from a create body. When `maxBoxes` Boxes are live, or their memory requests
   * fill `maxTotalMemoryBytes`, waits in FIFO order for room (box-queue.mjs) as long as the
   * create's `timeout` (the Box's lifetime) allows, or `maxQueueWaitMs` when shorter; 503
   * `capacity` when the queue is full (`maxQueued`), the wait ran out, or the Box is larger than
   * the memory bound. `workDir` (a Box path) is the Box's default cwd, `/vercel/sandbox` unless
   * given; `signal` (the client went away) leaves the queue; `queue: false` refuses at once
   * instead of waiting.
   * `source: { type: 'snapshot', snapshotId }` fills the work directory with a private copy of
   * that snapshot (410 `snapshot_not_found` when it is unknown or damaged); other sources are 400.
   * @param {Record<string, any>} body the create request's body
   * @param {{ workDir?: string, signal?: AbortSignal, queue?: boolean }} [options]
   */
  async create(body, { workDir, signal, queue = true } = {}) {
    const { name, timeout, resources, env } = body;
    const snapshotId = snapshotSource(body.source);
    if (name !== undefined && (typeof name !== 'string' || name === '')) {
      throw new BoxRequestError(400, 'bad_request', 'name must be a non-empty string');
    }
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0 && timeout <= MAX_TIMER_MS)) {
      throw new BoxRequestError(400, 'bad_request', `timeout must be a positive number of ms up to ${MAX_TIMER_MS}`);
    }
    const vcpus = resources?.vcpus;
    if (vcpus !== undefined && !(Number.isInteger(vcpus) && vcpus > 0)) {
      throw new BoxRequestError(400, 'bad_request', 'resources.vcpus must be a positive integer');
    }
    const denied = this.#enforceableDenial(body.networkPolicy);
    const boxEnv = checkEnv(env);
    this.#refuseTakenName(name);
    const fitsSpare = this.#fitsSpare({ denied, vcpus, boxEnv, workDir });
    const memoryBytes = this.#requestBytes(vcpus);
    // Nobody waits: the ready spare (or the one on its way) becomes this Box, its slot counted
    // at this create's request from now on, when that much more fits.
    if (fitsSpare && this.slots.queued === 0) {
      const spare = await this.parked.takeOrWait();
      if (spare && this.slots.tryGrow(memoryBytes - spare.chargeBytes)) {
        const box = await this.#claim(spare, { name, timeout, snapshotId, memoryBytes });
        this.#refillAfterIdle();
        return box;
      }
      // No room for it to grow (others came first): its slot goes back, this create queues.
      if (spare) await spare.stop();
    }
    // Spares give their slots up to a create that needs the room.
    if (this.parked?.readyCount > 0 && !this.slots.hasRoom(memoryBytes)) await this.parked.retireAll();
    try {
      if (!queue) {
        if (!this.slots.tryAcquire(memoryBytes))
          throw new QueueRefused(
            'full',
            `the local Box host already runs ${this.slots.used} Boxes (at most ${this.maxBoxes}, ${this.slots.usedBytes} of ${this.slots.maxBytes} bytes of memory requests in all)`,
          );
      } else {
        const granted = this.slots.acquire(signal, memoryBytes, timeout ?? DEFAULT_TIMEOUT_MS);
        // Waiting: a spare made ready since the check above (while retireAll ran) gives its slot
        // up too, as do those still being made once they are ready (ParkedBoxes `wanted`).
        if (this.slots.queued > 0) void this.parked?.retireAll();
        await granted;
      }
    } catch (err) {
      if (err instanceof QueueRefused) throw new BoxRequestError(503, 'capacity', err.message);
      throw err;
    }
    // Granted in turn: a spare ready now serves it, and the slot the spare held is freed.
    const late = fitsSpare ? this.parked.take() : undefined;
    if (late) {
      this.slots.release(late.chargeBytes);
      return this.#claim(late, { name, timeout, snapshotId, memoryBytes });
    }
    if (fitsSpare) this.#refillAfterIdle();
    let created = false;
    const making = {};
    this.making.add(making);
    try {
      this.#refuseWhenClosing();
      this.#refuseTakenName(name);
      const box = await Box.create(this.boxRoot, {
        ...this.#boxOptions(making),
        name,
        networkDenied: denied,
        env: boxEnv,
        timeoutMs: timeout,
        vcpus,
        workDir,
        sourceSnapshotId: snapshotId,
        onStopped: (stopped) => this.#forget(stopped),
      });
      making.box = box;
      box.fitsSpare = fitsSpare;
      box.chargeBytes = memoryBytes;
      if (this.closing) {
        // stopAll() began while this Box was being made: it is not live and nobody else stops it.
        await box.stop();
        this.#refuseWhenClosing();
      }
      await this.#restore(box, snapshotId);
      this.live.set(box.id, box);
      created = true;
      return box;
    } catch (err) {
      // Out of fds on the way (the Box disk's mount, the Box network's helpers): this machine's
      // failure, 503 as for a command's spawn, never a 500 read as a broken connection.
      if (outOfFds(err)) throw new BoxRequestError(503, 'spawn_failed', `the Box could not be created: ${err.message}`);
      throw err;
    } finally {
      this.making.delete(making);
      if (this.making.size === 0) this.#madeAll?.();
      // A created Box holds its slot until it stops (#forget).
      if (!created) this.slots.release(memoryBytes);
    }
  }

  /**
   * Work of the spares' shape came after they were retired unused (`idleMs`): they are made again
   * now, beside this create's Box, so the Runs that follow find them ready (a pool short for any
   * other reason fills when such a Box stops, #forget, not taking CPU from the Runs).
   */
  #refillAfterIdle() {
    if (this.parked?.shortBy === 'idle') this.parked.fill();
  }

  /**
   * A create that took spare Box `box` (its slot with it, now counting `memoryBytes`): it becomes
   * live under the create's name, lifetime and snapshot.
   */
  async #claim(box, { name, timeout, snapshotId, memoryBytes }) {
    box.chargeBytes = memoryBytes;
    // Checked again: the create may have waited for the spare.
    try {
      this.#refuseWhenClosing();
      this.#refuseTakenName(name);
    } catch (err) {
      // The slot now counts the create's request, not a spare's.
      box.onStopped = () => this.slots.release(memoryBytes);
      await box.stop();
      throw err;
    }
    box.claim({
      name,
      timeoutMs: timeout,
      sourceSnapshotId: snapshotId,
      onStopped: (stopped) => this.#forget(stopped),
    });
    box.fitsSpare = true;
    this.live.set(box.id, box);
    await this.#restore(box, snapshotId);
    return box;
  }

  /**
   * Fills `box`'s work directory with a private copy of snapshot `snapshotId` (none: nothing); a
   * restore that fails stops the Box and rejects with its error (410 `snapshot_not_found`…).
   */
  async #restore(box, snapshotId) {
    if (snapshotId === undefined) return;
    try {
      await this.snapshots.restore(snapshotId, box.workDirHost);
    } catch (err) {
      await box.stop();
      throw err;
    }
  }

  /** 409 `conflict` when a live Box is named `name` (checked again after each wait of a create). */
  #refuseTakenName(name) {
    if (name !== undefined && [...this.live.values()].some((box) => box.name === name)) {
      throw new BoxRequestError(409, 'conflict', `a running sandbox is already named ${name}`);
    }
  }

  /** 503 `host_closing` once stopAll() has begun: no Box may outlive the host. */
  #refuseWhenClosing() {
    if (this.closing) throw new BoxRequestError(503, 'host_closing', 'the local Box host is closing');
  }

  #forget(box) {
    if (this.live.delete(box.id)) this.slots.release(box.chargeBytes);
    if (box.handedOver) this.handedOver += 1;
    // Work a spare could serve came: the spares used or retired meanwhile are made anew, now that
    // this Box's work is done (making one while a Run runs would take CPU from it).
    if (box.fitsSpare) this.parked?.fill();
    this.stopped.set(box.id, box);
    if (this.stopped.size > STOPPED_MEMORY) this.stopped.delete(this.stopped.keys().next().value);
  }

  /** The running Box of a session id, or a 410 `sandbox_stopped` error. */
  running(sessionId) {
    const box = this.live.get(sessionId);
    if (!box || !box.running) {
      throw new BoxRequestError(410, 'sandbox_stopped', `Sandbox session ${sessionId} is stopped or unknown`);
    }
    return box;
  }

  /** Any known Box (live or remembered) by session id. */
  bySession(sessionId) {
    return this.live.get(sessionId) ?? this.stopped.get(sessionId);
  }

  /** The latest Box with this name (live first), or undefined. */
  byName(name) {
    for (const box of this.live.values()) if (box.name === name) return box;
    let found;
    for (const box of this.stopped.values()) if (box.name === name) found = box;
    return found;
  }

  /**
   * Synchronously kills every live Box's processes and removes its directory (process `exit`),
   * ends what the Boxes still being created hold (processes, cgroups, a running `mount`), then
   * removes every directory of this process left in the Box root (theirs, unmounted first).
   */
  removeAllNow() {
    this.parked?.closeNow();
    this.spares?.closeNow();
    for (const making of this.making) removeBoxInMakingNow(making);
    for (const box of this.live.values()) box.removeNow();
    removeOwnBoxDirsNow(this.boxRoot);
  }

  /**
   * Stops every live Box (whole process trees, directories removed), after the creates in flight
   * have ended: from now on a create is refused (503 `host_closing`), and one that finishes its Box
   * meanwhile stops that Box itself, so none is left running or on disk once this resolves.
   */
  async stopAll() {
    this.closing = true;
    if (this.making.size > 0) await new Promise((resolve) => (this.#madeAll = resolve));
    await this.parked?.close();
    await this.spares?.close();
    await Promise.all([...this.live.values()].map((box) => box.stop()));
  }
}
