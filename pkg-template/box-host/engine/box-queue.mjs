// Back-pressure at the Box limit: a create that finds every Box slot taken, or the host's total
// memory bound spent (each Box counts its memory limit), waits its turn in a FIFO queue instead
// of failing. The queue is bounded twice: by its length (a create beyond it is
// refused at once) and by how long one create may wait; both refusals are 503 `capacity`, which
// the runtime reports as SANDBOX_PROVIDER_UNAVAILABLE. A waiter whose client went away leaves.

/** Creates that may wait at once, by default. */
export const DEFAULT_MAX_QUEUED = 1024;
/** Longest a create waits for a slot, by default (ms). */
export const DEFAULT_MAX_QUEUE_WAIT_MS = 120_000;

/** Thrown when no slot is granted: `reason` is 'full' (queue length) or 'timeout'. */
export class QueueRefused extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

export class BoxSlots {
  /**
   * `capacity` slots and `maxBytes` of memory limits in all (default unbounded); at most
   * `maxQueued` waiters, each for at most `maxWaitMs`.
   */
  constructor({
    capacity,
    maxBytes = Infinity,
    maxQueued = DEFAULT_MAX_QUEUED,
    maxWaitMs = DEFAULT_MAX_QUEUE_WAIT_MS,
  }) {
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

  /** Takes a free slot for a Box of `bytes` now without queueing; false when none is free (or others wait). */
  tryAcquire(bytes = 0) {
    if (!this.hasRoom(bytes)) return false;
    this.#take(bytes);
    return true;
  }

  /**
   * Resolves once a slot is held by the caller (who must `release()` it exactly once). Rejects
   * with QueueRefused when the queue is full or the wait passed `maxWaitMs`, and with the
   * signal's reason when `signal` fires first.
   */
  acquire(signal, bytes = 0) {
    if (bytes > this.maxBytes) {
      return Promise.reject(
        new QueueRefused(
          'too-large',
          `a Box of ${bytes} bytes of memory is over the host's total bound of ${this.maxBytes} bytes (maxTotalMemoryBytes)`,
        ),
      );
    }
    if (this.tryAcquire(bytes)) return Promise.resolve();
    if (this.waiters.length >= this.maxQueued) {
      return Promise.reject(
        new QueueRefused('full', `${this.capacity} Boxes are running and ${this.waiters.length} creates are waiting`),
      );
    }
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
      waiter.timer = setTimeout(
        () =>
          leave(
            new QueueRefused(
              'timeout',
              `no Box slot became free within ${this.maxWaitMs}ms (${this.used} Boxes are running with ${this.usedBytes} bytes of memory limits)`,
            ),
          ),
        this.maxWaitMs,
      );
      waiter.timer.unref?.();
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
