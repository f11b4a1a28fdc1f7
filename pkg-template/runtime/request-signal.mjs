// The AbortSignal of a route's client: it aborts when the client goes away before the answer is
// complete, so `runSandbox(name, payload, { signal: requestSignal(event) })` stops the Box of a
// Run nobody waits for. A Web Request's own `signal` says exactly that, except under srvx 0.8 (the
// Node adapter of nitro 3.0.0 and h3 2.0.1-rc): there `event.req.signal` listens to the Node
// request's 'close', which Node emits once the body has been read, so it aborts every Run that
// read its payload first. srvx 1.x listens to the response instead; so does this, on Node.

const sources = new WeakMap();

/** The Node response behind an h3 v2 event (`event.runtime.node.res`) or an h3 v1 event (`event.node.res`). */
function nodeResponse(event) {
  const res = event?.runtime?.node?.res ?? event?.node?.res;
  return res !== null && typeof res === 'object' && typeof res.once === 'function' ? res : undefined;
}

/**
 * An AbortSignal that aborts (reason: a DOMException `AbortError`) when the client of `event`
 * closes its connection before the response has been sent in full. `event` is a Web Request
 * (its own `signal`), an h3 v2 event or an h3 v1 event. One signal per event.
 * @throws {TypeError} when `event` is none of those.
 */
export function requestSignal(event) {
  const res = nodeResponse(event);
  if (res === undefined) {
    const signal =
      event instanceof Request ? event.signal : event?.req instanceof Request ? event.req.signal : undefined;
    if (signal === undefined)
      throw new TypeError('requestSignal(event) expects a Web Request, an h3 v2 event or an h3 v1 event');
    return signal;
  }
  let controller = sources.get(res);
  if (controller === undefined) {
    controller = new AbortController();
    sources.set(res, controller);
    const aborter = controller;
    res.once('close', () => {
      if (!res.writableFinished)
        aborter.abort(new DOMException('the client closed the connection before the response was sent', 'AbortError'));
    });
  }
  return controller.signal;
}
