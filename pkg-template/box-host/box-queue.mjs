// Back-pressure at the Box limit: a create that finds every Box slot taken waits its turn in a
// FIFO queue instead of failing. The queue is bounded twice: by its length (a create beyond it is
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
  /** `capacity` slots; at most `maxQueued` waiters, each for at most `maxWaitMs`. */
  constructor({ capacity, maxQueued = DEFAULT_MAX_QUEUED, maxWaitMs = DEFAULT_MAX_QUEUE_WAIT_MS }) {
    this.capacity = capacity;
    this.maxQueued = maxQueued;
    this.maxWaitMs = maxWaitMs;
    this.used = 0;
    this.waiters = [];
  }

  /** Slots in use (held Boxes and creates in progress). */
  get inUse() {
    return this.used;
  }

  /** Creates waiting now. */
  get queued() {
    return this.waiters.length;
  }

  /** Takes a free slot now without queueing; false when none is free (or others wait). */
  tryAcquire() {
    if (this.used >= this.capacity || this.waiters.length > 0) return false;
    this.used += 1;
    return true;
  }

  /**
   * Resolves once a slot is held by the caller (who must `release()` it exactly once). Rejects
   * with QueueRefused when the queue is full or the wait passed `maxWaitMs`, and with the
   * signal's reason when `signal` fires first.
   */
  acquire(signal) {
    if (this.tryAcquire()) return Promise.resolve();
    if (this.waiters.length >= this.maxQueued) {
      return Promise.reject(new QueueRefused('full', `${this.capacity} Boxes are running and ${this.waiters.length} creates are waiting`));
    }
    return new Promise((resolve, reject) => {
      const waiter = { grant: null, timer: null };
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
        () => leave(new QueueRefused('timeout', `no Box slot became free within ${this.maxWaitMs}ms (${this.capacity} Boxes are running)`)),
        this.maxWaitMs,
      );
      waiter.timer.unref?.();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Frees one slot: the oldest waiter gets it. */
  release() {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.used = Math.max(0, this.used - 1);
  }
}
