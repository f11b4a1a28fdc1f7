// Back-pressure at the host's bounds: a create that finds every Box slot taken (`maxBoxes`), or the
// host's memory bound spent (each Box counts its memory request: what it is expected to use, not
// its limit), waits its turn in a FIFO queue instead of failing. A waiter leaves when its client
// goes away (its `signal`) or when its own wait bound passes: the create's `timeout` (the Box
// would be over its lifetime by then), or `maxWaitMs` when the host sets a shorter one. So a
// busy host makes a create wait as long as the Run behind it allows, and never refuses it for
// being busy. The queue's length is bounded (`maxQueued`): a create beyond it is refused at once,
// as is a Box larger than the whole memory bound; both refusals are 503 `capacity`, which the
// runtime reports as SANDBOX_PROVIDER_UNAVAILABLE with the message given here.

/**
 * What one Box counts against the memory bound unless the host says otherwise (`memoryRequestBytes`):
 * 512 MiB, room for a Run's Node and a handler that works with data (a Run of a small handler
 * charges its Box cgroup about 8 MiB at its peak; Node's code pages are shared file pages). A Box
 * of a smaller memory limit counts its limit.
 */
export const DEFAULT_MEMORY_REQUEST_BYTES = 512 * 1024 * 1024;

/** Creates that may wait at once, by default. */
export const DEFAULT_MAX_QUEUED = 1024;

/** Thrown when no slot is granted: `reason` is 'full' (queue length), 'timeout' or 'too-large'. */
export class QueueRefused extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

export class BoxSlots {
  /**
   * `capacity` slots and `maxBytes` of memory requests in all (default unbounded); at most
   * `maxQueued` waiters, each for at most `maxWaitMs` (default: only its own wait bound).
   */
  constructor({ capacity, maxBytes = Infinity, maxQueued = DEFAULT_MAX_QUEUED, maxWaitMs = Infinity }) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.maxQueued = maxQueued;
    this.maxWaitMs = maxWaitMs;
    this.used = 0;
    this.usedBytes = 0;
    this.waiters = [];
  }

  /** Whether a Box of `bytes` fits now. */
  #fits(bytes) {
    return this.used < this.capacity && this.usedBytes + bytes <= this.maxBytes;
  }

  #take(bytes) {
    this.used += 1;
    this.usedBytes += bytes;
  }

  /** Slots in use (held Boxes and creates in progress). */
  get inUse() {
    return this.used;
  }

  /** Creates waiting now. */
  get queued() {
    return this.waiters.length;
  }

  /** Whether a Box of `bytes` would get a slot now without waiting. */
  hasRoom(bytes = 0) {
    return this.#fits(bytes) && this.waiters.length === 0;
  }

  /**
   * What keeps a Box of `bytes` from a slot now: 'queue' (creates wait), 'maxBoxes' (every slot
   * is taken), 'memory' (the memory bound is spent), or null (it fits).
   */
  limitedBy(bytes = 0) {
    if (this.waiters.length > 0) return 'queue';
    if (this.used >= this.capacity) return 'maxBoxes';
    if (this.usedBytes + bytes > this.maxBytes) return 'memory';
    return null;
  }

  /** Takes a free slot for a Box of `bytes` now without queueing; false when none is free (or others wait). */
  tryAcquire(bytes = 0) {
    if (!this.hasRoom(bytes)) return false;
    this.#take(bytes);
    return true;
  }

  /**
   * Adds `bytes` to what a slot already held counts (a spare that becomes a Box of a larger
   * request) when they fit now and nobody waits; false otherwise (nothing changes).
   */
  tryGrow(bytes) {
    if (this.waiters.length > 0 || this.usedBytes + bytes > this.maxBytes) return false;
    this.usedBytes += bytes;
    return true;
  }

  /**
   * Resolves once a slot is held by the caller (who must `release()` it exactly once). Rejects
   * with QueueRefused when the queue is full, the Box is larger than `maxBytes`, or the wait
   * passed `waitMs` (the create's own bound; `maxWaitMs` when shorter; never when both are
   * Infinity), and with the signal's reason when `signal` fires first.
   */
  acquire(signal, bytes = 0, waitMs = Infinity) {
    if (bytes > this.maxBytes) {
      return Promise.reject(
        new QueueRefused(
          'too-large',
          `a Box of ${bytes} bytes of memory request is over the host's total bound of ${this.maxBytes} bytes (maxTotalMemoryBytes)`,
        ),
      );
    }
    if (this.tryAcquire(bytes)) return Promise.resolve();
    if (this.waiters.length >= this.maxQueued) {
      return Promise.reject(
        new QueueRefused(
          'full',
          `the local Box host's queue is full: ${this.waiters.length} creates already wait for a Box slot (maxQueued) while ${this.used} Boxes run`,
        ),
      );
    }
    const boundMs = Math.min(waitMs, this.maxWaitMs);
    const bound = boundMs === waitMs ? "the create's timeout" : 'maxQueueWaitMs';
    return new Promise((resolve, reject) => {
      const waiter = { bytes, grant: null, timer: null };
      const leave = (error) => {
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = () => leave(signal.reason ?? new Error('aborted'));
      waiter.grant = () => {
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (Number.isFinite(boundMs)) {
        waiter.timer = setTimeout(
          () =>
            leave(
              new QueueRefused(
                'timeout',
                `no Box slot became free within ${boundMs}ms (${bound}; ${this.used} Boxes are running with ${this.usedBytes} bytes of memory requests)`,
              ),
            ),
          boundMs,
        );
        waiter.timer.unref?.();
      }
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Frees the slot of a Box of `bytes`: the oldest waiters get slots while they fit, in order. */
  release(bytes = 0) {
    this.used = Math.max(0, this.used - 1);
    this.usedBytes = Math.max(0, this.usedBytes - bytes);
    while (this.waiters.length > 0 && this.#fits(this.waiters[0].bytes)) {
      const next = this.waiters.shift();
      this.#take(next.bytes);
      next.grant();
    }
  }
}
