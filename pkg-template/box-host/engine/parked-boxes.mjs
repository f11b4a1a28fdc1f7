// Spare Boxes with a parked Node process in each (parked-node.mjs), made ahead so that a create
// takes one that is ready: its directory, disk, cgroup, network and a `node` already started. A
// spare goes to exactly one create and its process to that Box's first command (when it is a
// Run's harness); nothing of a spare is ever used twice, so Boxes share nothing more than before.
//
// Spares hold a Box slot each (box-queue.mjs: they count against `maxBoxes`) and count against
// the memory total by what an idle one uses (SPARE_MEMORY_BYTES), not by a Box's request; a create
// that takes one grows its count to the create's request. They are given up when a create needs
// the room. One that waited `idleMs` is retired and not replaced: the pool fills when the host
// starts and again when a Box a spare could have served stops (there is such work), so a host
// whose creates never fit (the Cloudflare container API's `/workspace` Boxes) keeps none after the
// first `idleMs`. Why fewer than `size` are ready is kept (`limitedBy`). Bubblewrap hosts only (the
// parked script is shown in the sandbox).

/**
 * What a spare counts against the host's memory bound (bytes): 32 MiB, above what an idle one
 * uses (its Box cgroup's usage, measured: about 8 MiB, 6.6 MiB of it the parked Node's private
 * memory; tests/box-host/capacity.test.mjs checks it on hosts with a memory cgroup).
 */
export const SPARE_MEMORY_BYTES = 32 * 1024 * 1024;

/** What `startBoxHost({ parked })` defaults to: 2 spares, each retired after 5 minutes unused. */
export const DEFAULT_PARKED = Object.freeze({ size: 2, idleMs: 300_000 });
/** Largest `parked.size` (each spare is a Box and a Node process, about 40 MB of memory). */
export const MAX_PARKED = 16;

/** Checks the `parked` option of startBoxHost (TypeError naming the key); the option with its defaults. */
export function parkedOption(option) {
  // null as undefined: the defaults (configureSandbox's `local.parked: null` reads so too).
  if (option === undefined || option === null) return { ...DEFAULT_PARKED };
  if (typeof option !== 'object' || Array.isArray(option))
    throw new TypeError('parked must be an object { size, idleMs }');
  const unknown = Object.keys(option).filter((key) => !(key in DEFAULT_PARKED));
  if (unknown.length > 0)
    throw new TypeError(
      `parked has no option ${unknown.map((key) => JSON.stringify(key)).join(', ')}: it takes size and idleMs`,
    );
  const { size = DEFAULT_PARKED.size, idleMs = DEFAULT_PARKED.idleMs } = option;
  if (!Number.isInteger(size) || size < 0 || size > MAX_PARKED)
    throw new TypeError(`parked.size must be an integer from 0 to ${MAX_PARKED}, got ${JSON.stringify(size)}`);
  if (!Number.isInteger(idleMs) || idleMs < 1 || idleMs > 3_600_000)
    throw new TypeError(
      `parked.idleMs must be an integer number of ms from 1 to 3600000, got ${JSON.stringify(idleMs)}`,
    );
  return { size, idleMs };
}

export class ParkedBoxes {
  /**
   * `make()` resolves to a new Box with a parked process holding a slot of its own, or to what
   * kept it from one ('queue', 'maxBoxes', 'memory': box-queue.mjs `limitedBy`; 'closing'); it
   * rejects with what failed (the pool keeps the message in `lastError`). `wanted()` tells whether
   * a create waits for a slot: a spare made meanwhile gives its slot up at once instead of keeping
   * it from that create until `idleMs`.
   */
  constructor({ size, idleMs, make, wanted = () => false }) {
    this.size = size;
    this.idleMs = idleMs;
    this.make = make;
    this.wanted = wanted;
    /** Ready spares, oldest first: `{ box, timer }`. */
    this.ready = [];
    this.making = new Set();
    this.closed = false;
    this.lastError = null;
    /** What ended the last round of fill() short of `size` (see `limitedBy`), or null. */
    this.shortBy = null;
  }

  /**
   * Why fewer than `size` spares are ready, or null when all are: 'making' (on their way), 'idle'
   * (retired after `idleMs` unused; made again when a Box of their shape stops), 'queue' (creates
   * wait for slots: spares never take one), 'maxBoxes' (every Box slot is taken), 'memory' (the
   * host's memory bound is spent), 'error' (the last one failed: `lastError`), 'taken' (creates
   * took them; made again when those Boxes stop).
   */
  get limitedBy() {
    if (this.ready.length >= this.size) return null;
    if (this.making.size > 0) return 'making';
    return this.shortBy ?? 'taken';
  }

  /**
   * Starts making the missing spares in the background, one after the other: a spare made alone
   * is ready sooner, and takes less CPU from the Run that may be starting beside it. A make that
   * fails, or finds no free slot, ends the round (the next fill() tries again).
   */
  fill() {
    if (this.closed || this.making.size > 0 || this.ready.length >= this.size) return;
    this.shortBy = null;
    const made = this.make().then(
      (box) => {
        this.making.delete(made);
        if (typeof box === 'string') {
          this.shortBy = box;
          return;
        }
        // Held until stopped: close() waits for what is being made.
        if (this.closed || this.wanted()) {
          this.shortBy = 'queue';
          return box.stop().catch(() => {});
        }
        const timer = setTimeout(() => this.#retire(box), this.idleMs);
        timer.unref();
        this.ready.push({ box, timer });
        this.fill();
      },
      (err) => {
        this.making.delete(made);
        this.lastError = err.message;
        this.shortBy = 'error';
      },
    );
    this.making.add(made);
  }

  /** A ready spare whose process still waits (the oldest), or undefined. */
  take() {
    while (this.ready.length > 0) {
      const { box, timer } = this.ready.shift();
      clearTimeout(timer);
      if (box.running && box.hasParked) return box;
      box.stop().catch(() => {});
    }
    return undefined;
  }

  /**
   * take(), but when none is ready and one is being made, waits for it first: it started before
   * the caller asked, so it is ready sooner than a Box the caller would start now (the first Run
   * of a host that has just started). Undefined when it failed or another caller took it.
   */
  async takeOrWait() {
    if (this.ready.length === 0 && this.making.size > 0) await Promise.race(this.making);
    return this.take();
  }

  #retire(box) {
    const at = this.ready.findIndex((spare) => spare.box === box);
    if (at === -1) return;
    this.ready.splice(at, 1);
    this.shortBy = 'idle';
    box.stop().catch(() => {});
  }

  /** Stops every ready spare (their slots are freed: a create needs the room); resolves once they are stopped. */
  async retireAll() {
    const spares = this.ready.splice(0);
    if (spares.length > 0) this.shortBy = 'queue';
    await Promise.all(
      spares.map(({ box, timer }) => {
        clearTimeout(timer);
        return box.stop().catch(() => {});
      }),
    );
  }

  /** Spares ready now. */
  get readyCount() {
    return this.ready.length;
  }

  /** Stops the spares, the ready ones and those being made; no spare is made any more. */
  async close() {
    this.closed = true;
    await Promise.all([this.retireAll(), ...this.making]);
  }

  /** close(), synchronously (process `exit`): the ready spares' processes and directories. */
  closeNow() {
    this.closed = true;
    for (const { box, timer } of this.ready.splice(0)) {
      clearTimeout(timer);
      box.removeNow();
    }
  }
}
