// Sessions in JS: thin wrappers over the core's SandboxSession / SandboxProcess / SandboxLogStream
// (src/api/session/), adding only what JS syntax needs: `Symbol.asyncDispose` (so `await using`
// closes the Box) and `logs()` as an async iterator. Every check and state rule is in the core.

import { onLogEvents } from './run-handle.mjs';

/** `Symbol.asyncDispose`, or the registered symbol TypeScript and esbuild fall back to. */
const asyncDispose = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

/** `(command, options)` is accepted for `(command, undefined, options)`. */
function commandArgs(args, options) {
  if (options === undefined && args !== null && typeof args === 'object' && !Array.isArray(args))
    return [undefined, args];
  return [args, options];
}

class SandboxProcess {
  #raw;
  #stdin;

  constructor(raw) {
    this.#raw = raw;
    this.id = raw.id;
  }

  writeStdin(data) {
    return this.#raw.writeStdin(data);
  }

  closeStdin() {
    return this.#raw.closeStdin();
  }

  /** The Command's stdin as a WritableStream (one per handle): each chunk is a `writeStdin`, closing it `closeStdin`. */
  get stdin() {
    this.#stdin ??= new WritableStream({
      write: (chunk) => this.#raw.writeStdin(chunk),
      close: () => this.#raw.closeStdin(),
      abort: () => this.#raw.closeStdin(),
    });
    return this.#stdin;
  }

  /** The Command's output from its start, then live until it exits: `{ stream, data }` entries. */
  async *logs() {
    const stream = await this.#raw.openLogs();
    try {
      for (;;) {
        const entry = await stream.next();
        if (entry === undefined) return;
        yield entry;
      }
    } finally {
      stream.cancel();
    }
  }

  wait() {
    return this.#raw.wait();
  }

  kill(signal) {
    return this.#raw.kill(signal);
  }
}

class SandboxSession {
  #raw;

  constructor(raw) {
    this.#raw = raw;
    this.id = raw.id;
    this.provider = raw.provider;
    this.cwd = raw.cwd;
  }

  /** The Box's frozen executionAuthority; a new object after `updateNetworkPolicy`. */
  get executionAuthority() {
    return this.#raw.executionAuthority;
  }

  updateNetworkPolicy(policy) {
    return this.#raw.updateNetworkPolicy(policy);
  }

  get status() {
    return this.#raw.status;
  }

  /** When the Box lifetime ends (`undefined` without one); moves with `extendTimeout`. */
  get expiresAt() {
    const ms = this.#raw.expiresAt;
    return ms === undefined ? undefined : new Date(ms);
  }

  extendTimeout(ms) {
    return this.#raw.extendTimeout(ms);
  }

  async command(id) {
    return new SandboxProcess(await this.#raw.command(id));
  }

  exec(command, args, options) {
    return this.#raw.exec(command, ...commandArgs(args, options));
  }

  async spawn(command, args, options) {
    return new SandboxProcess(await this.#raw.spawn(command, ...commandArgs(args, options)));
  }

  read(path) {
    return this.#raw.read(path);
  }

  async readText(path) {
    const bytes = await this.#raw.read(path);
    return bytes === null ? null : new TextDecoder().decode(bytes);
  }

  write(path, data) {
    return this.#raw.write(path, data);
  }

  exists(path) {
    return this.#raw.exists(path);
  }

  mkdir(path, options) {
    return this.#raw.mkdir(path, options);
  }

  remove(path, options) {
    return this.#raw.remove(path, options);
  }

  close() {
    return this.#raw.close();
  }

  [asyncDispose]() {
    return this.#raw.close();
  }
}

/**
 * The Session functions and resolveSandboxRunner over an initialised runtime wasm module.
 * @param {object} wasm the wasm-bindgen exports
 * @param {() => Function | undefined} [defaultOnLog] the onLog of `configureSandbox`, for a runner's Runs
 * @param {() => void} [refreshEnv] reads the runtime's env again before a Session or a runner reaches a provider (api.mjs)
 */
export function sessionApi(wasm, defaultOnLog = () => undefined, refreshEnv = () => {}) {
  return {
    openSandboxSession: async (options) => {
      refreshEnv();
      return new SandboxSession(await wasm.openSandboxSession(options));
    },
    listSandboxSessions: (options) => {
      refreshEnv();
      return wasm.listSandboxSessions(options);
    },
    resolveSandboxRunner: async (name) => {
      refreshEnv();
      const runner = await wasm.resolveSandboxRunner(name);
      return Object.freeze({
        name: runner.name,
        provider: runner.provider,
        executionAuthority: runner.executionAuthority,
        run: (payload, options) => {
          refreshEnv();
          return runner.run(payload, options, onLogEvents(runner.name, options, defaultOnLog()));
        },
      });
    },
  };
}
