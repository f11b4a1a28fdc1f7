// Counts of live objects in this process, for leak tests: `AbortController`s, and the
// wasm-bindgen closures JS holds (each is registered with the glue's `FinalizationRegistry` until
// Rust drops it or JS collects it). Import this module before `@vite-hub/sandbox`, in a process
// started with `--expose-gc`: it wraps the two constructors the package's glue uses.

const live = { controllers: 0, closures: 0 };

const NativeAbortController = globalThis.AbortController;
const controllersGone = new FinalizationRegistry(() => {
  live.controllers -= 1;
});
globalThis.AbortController = class AbortController extends NativeAbortController {
  constructor() {
    super();
    live.controllers += 1;
    controllersGone.register(this, undefined);
  }
};

/** A wasm-bindgen closure's state, as the glue registers it: `{ a, b, cnt }`. */
const isClosureState = (held) => held !== null && typeof held === 'object' && 'cnt' in held && 'a' in held;

const NativeFinalizationRegistry = globalThis.FinalizationRegistry;
globalThis.FinalizationRegistry = class CountingFinalizationRegistry extends NativeFinalizationRegistry {
  #closures = new Set();
  constructor(cleanup) {
    super((held) => {
      if (this.#closures.delete(held)) live.closures -= 1;
      cleanup(held);
    });
  }
  register(target, held, token) {
    if (isClosureState(held) && !this.#closures.has(held)) {
      this.#closures.add(held);
      live.closures += 1;
    }
    return super.register(target, held, token);
  }
  unregister(token) {
    if (this.#closures.delete(token)) live.closures -= 1;
    return super.unregister(token);
  }
};

/**
 * The live counts once garbage is collected and finalizers ran: `{ controllers, closures,
 * heapBytes }` (`heapBytes`: V8's used heap after GC).
 */
export async function liveCounts() {
  for (let round = 0; round < 6; round += 1) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { ...live, heapBytes: process.memoryUsage().heapUsed };
}
