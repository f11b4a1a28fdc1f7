// Per-route request counters of the Box host (`GET /_vite-hub/counters`).

export class RequestCounters {
  #requests = new Map();
  #total = 0;

  /** Counts one request to the named route. */
  count(route) {
    this.#requests.set(route, (this.#requests.get(route) ?? 0) + 1);
    this.#total += 1;
  }

  /** `{ requests: { <route>: n }, total: n }` (a fresh copy). */
  snapshot() {
    return { requests: Object.fromEntries(this.#requests), total: this.#total };
  }

  reset() {
    this.#requests.clear();
    this.#total = 0;
  }
}
