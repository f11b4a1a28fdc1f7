// One Box command: a real process (argv, no shell) in its own process group, its output history
// (replayable for log followers), its exit code, and the timeout that kills the whole tree.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { joinBoxCgroup } from './box-limits.mjs';
import { BOX_FILES_FD } from './isolation.mjs';
import { stdioCovering } from './inherited-fds.mjs';
import { handOverLine } from './parked-node.mjs';
import { killTreeAndWait, signalTree } from './process-tree.mjs';

/**
 * Output kept per command for replay to a late follower (bytes of text, 4 MiB: the default
 * maxOutputBytes); later output is dropped from history. A Run follows its command from the
 * start and needs none of it; an in-process host keeps it in the app's own heap.
 */
export const MAX_LOG_BYTES = 4 * 1024 * 1024;

/**
 * The host-wide budget of kept command output (bytes of text, all live commands together): a
 * command's history takes from it as it grows and gives it back when the Box stops, so memory is
 * bounded by the budget, not by what Boxes print. Followers attached from the start see every
 * byte live; only the replay for a late follower is cut once the budget is spent.
 */
export class LogBudget {
  constructor(totalBytes) {
    this.total = totalBytes;
    this.used = 0;
  }

  take(bytes) {
    if (this.used + bytes > this.total) return false;
    this.used += bytes;
    return true;
  }

  give(bytes) {
    this.used = Math.max(0, this.used - bytes);
  }
}
/**
 * The host could not start a Box process (`code`: the spawn's errno name, e.g. EMFILE): a
 * failure of this machine, which the routes answer with 503, never a command's exit.
 */
export class SpawnError extends Error {
  /** `cause`: the spawn's error; `what`: the process, when it is one of the host's helpers. */
  constructor(cause, what = 'a process') {
    const why =
      cause.code === 'EMFILE' || cause.code === 'ENFILE'
        ? 'the app process is at its limit of open files (raise `ulimit -n`, or close what it holds)'
        : cause.message;
    super(`the Box host could not start ${what}: ${why} (${cause.code ?? 'spawn failed'})`, { cause });
    this.name = 'SpawnError';
    this.code = cause.code;
  }
}

/**
 * Whether `err` (or an error it was caused by) says the host ran out of file descriptors, the
 * app's limit (EMFILE) or the system's (ENFILE): a failure of this machine, answered with 503.
 */
export function outOfFds(err) {
  for (let e = err, depth = 0; e && depth < 8; e = e.cause, depth += 1) {
    if (e.code === 'EMFILE' || e.code === 'ENFILE') return true;
  }
  return false;
}

/** A write to, or close of, the stdin of a command that has none open (not attached, closed, exited). */
export class StdinUnavailable extends Error {
  constructor(cmd) {
    super(
      !cmd.attachStdin
        ? `command ${cmd.id} was not started with attachStdin: its stdin is empty`
        : cmd.running
          ? `command ${cmd.id}'s stdin is closed`
          : `command ${cmd.id} has exited`,
    );
    this.name = 'StdinUnavailable';
    this.exited = cmd.attachStdin && !cmd.running;
  }
}

/** A stdin write the command did not read within its time (ms). */
export class StdinTimeout extends Error {
  constructor(timeoutMs) {
    super(`the command did not read its stdin within ${timeoutMs} ms; its stdin is now closed`);
    this.name = 'StdinTimeout';
  }
}

/** How long to wait for the output pipes to close after the main process exited (ms). */
const PIPE_GRACE_MS = 200;

function signalNumber(signal) {
  return typeof signal === 'number' ? signal : (os.constants.signals[signal] ?? 9);
}

/**
 * Events: 'log' ({stream, data}), 'exit' (exitCode). `logs` holds the history, `exitCode` is null
 * while running. Exit codes: the process's own code, or 128 + signal number (137 on timeout).
 */
export class BoxCommand extends EventEmitter {
  /**
   * Starts the process of `spec` (isolation.mjs spawnSpec). `parked: true` starts a parked Node
   * process (parked-node.mjs): it does not hold the host's event loop, has no timeout yet, and
   * becomes a command on handOver().
   */
  constructor({ id, sessionId, name, args, cwd, spec, timeoutMs, logBudget, parked = false, attachStdin = false }) {
    super();
    this.setMaxListeners(0);
    this.id = id;
    this.sessionId = sessionId;
    this.name = name;
    this.args = args;
    this.cwd = cwd;
    this.startedAt = Date.now();
    this.exitCode = null;
    this.finishedAt = null;
    this.logs = [];
    this.logBytes = 0;
    /** @type {number | undefined} The first signal sent to the command (a number), if any. */
    this.signalled = undefined;
    /** @type {Promise<unknown> | undefined} The kill of the whole tree, once one started. */
    this.killing = undefined;
    this.logBudget = logBudget ?? new LogBudget(MAX_LOG_BYTES);
    this.historyCut = false;
    this.forcedExitCode = null;
    this.reaped = false;
    this.outputPaused = false;
    this.parked = parked;
    /**
     * Whether the command reads a pipe the host writes (`attachStdin`); without it the command
     * reads an empty stdin. `stdinBytes` counts the bytes it accepted, `stdinClosed` says the
     * pipe was closed (by `closeStdin`, a failed write, or the command's exit).
     */
    this.attachStdin = attachStdin;
    this.stdinBytes = 0;
    this.stdinClosed = !attachStdin;
    /**
     * Resolves once the process runs (or, spawned without a wrapper, was not found: exit 127);
     * rejects with a SpawnError when the host could not start it. Never left unhandled.
     */
    this.spawned = new Promise((resolve, reject) => {
      this.resolveSpawned = resolve;
      this.rejectSpawned = reject;
    });
    this.spawned.catch(() => {});
    this.#start(spec, parked ? undefined : timeoutMs);
    if (parked && this.child) this.#hold(false);
  }

  /**
   * Turns this parked process into the command `name args` in `cwd` (a Box path; `seenCwd` is
   * where the process finds it: the same under bubblewrap) with its own id and `timeoutMs`: the
   * process reads the handover line (parked-node.mjs) and its stdin ends.
   */
  handOver({ id, name, args, cwd, seenCwd, timeoutMs }) {
    Object.assign(this, { id, name, args, cwd, parked: false, startedAt: Date.now() });
    this.#hold(true);
    this.child.stdin.on('error', () => {});
    this.child.stdin.end(handOverLine(seenCwd, args));
    this.#armTimeout(timeoutMs);
  }

  /** Whether the process (its handle and output pipes) keeps the host's event loop alive. */
  #hold(held) {
    const how = held ? 'ref' : 'unref';
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr]) handle?.[how]?.();
  }

  #armTimeout(timeoutMs) {
    if (timeoutMs === undefined) return;
    this.timer = setTimeout(() => {
      this.forcedExitCode = 137;
      this.killAll();
    }, timeoutMs);
  }

  #start(spec, timeoutMs) {
    // bubblewrap: fd 3 carries its options, fds 4… the contents of files made in the sandbox
    // and the seccomp filter's programs (`boxFiles`: the Box network's resolv.conf, npm's
    // global config without credentials, box-seccomp.mjs); /dev/null covers every fd this
    // process would leak into the Box beyond them (inherited-fds.mjs).
    const own =
      spec.argsData === undefined
        ? [spec.stdin ?? 'ignore', 'pipe', 'pipe']
        : [spec.stdin ?? 'ignore', 'pipe', 'pipe', 'pipe', ...(spec.boxFiles ?? []).map(() => 'pipe')];
    let child;
    try {
      child = spawn(spec.file, spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        // The Box's own host uid on a root host (box-user.mjs), set before bwrap starts.
        ...(spec.uid === undefined ? {} : { uid: spec.uid, gid: spec.gid }),
        shell: false,
        detached: true,
        stdio: stdioCovering(own, spec.inheritedFds ?? []),
      });
    } catch (err) {
      // Refused before any process (out of fds for its pipes, a bad option): the host's
      // failure, never the command's.
      this.#spawnFailed(err);
      return;
    }
    this.child = child;
    this.pid = child.pid;
    // Listened to first: a spawn that fails (EMFILE at the app's fd limit, bwrap gone) reports
    // on this event, and its stdio was never made.
    child.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      if (this.pid !== undefined || this.exitCode !== null) return;
      // The command itself, spawned without a wrapper, is missing or not executable: its exit
      // code, as a shell gives it. Anything else is the host's.
      if (spec.file === this.name && (err.code === 'ENOENT' || err.code === 'EACCES')) {
        this.#record('stderr', `${this.name}: ${err.code === 'ENOENT' ? 'command not found' : err.message}\n`);
        this.#finish(err.code === 'ENOENT' ? 127 : 126);
        this.#settleSpawn(null);
      } else {
        this.#spawnFailed(err);
      }
    });
    if (this.pid === undefined) return;
    child.once('spawn', () => this.#settleSpawn(null));
    // In a PID namespace of its own, every process of the command dies with it (the kernel
    // kills a namespace whose init exits): no /proc scan is needed once it has exited.
    this.pidNamespace = spec.pidNamespace === true;
    if (spec.argsData !== undefined) {
      child.stdio[3].on('error', () => {});
      for (const [i, data] of (spec.boxFiles ?? []).entries()) {
        child.stdio[BOX_FILES_FD + i].on('error', () => {});
        /** @type {import('node:stream').Writable} */ (child.stdio[BOX_FILES_FD + i]).end(data);
      }
      this.#setUpSandbox(child, spec).catch((err) => {
        // A signal sent while the sandbox was still being set up ends the set-up too: the
        // command exits by that signal (128 + n), not as a set-up failure.
        if (this.signalled === undefined) {
          this.#record('stderr', `the Box could not set up the command: ${err.message}\n`);
          this.forcedExitCode = 126;
        } else {
          this.forcedExitCode = 128 + this.signalled;
        }
        this.killAll().catch(() => {});
      });
    } else {
      // Plain processes: the cgroup is joined right after the spawn (best effort).
      void this.#joinCgroups(spec, this.pid);
    }
    for (const stream of ['stdout', 'stderr']) {
      const decoder = new StringDecoder('utf8');
      child[stream].on('data', (chunk) => this.#record(stream, decoder.write(chunk)));
      child[stream].on('end', () => this.#record(stream, decoder.end()));
    }
    if (this.attachStdin) child.stdin?.on('error', () => {});
    child.on('exit', (code, signal) => {
      this.reaped = true;
      // The pipe ends with the command (and so when its Box stops): no write waits on it.
      if (this.attachStdin) {
        this.stdinClosed = true;
        child.stdin?.destroy();
      }
      // bwrap's option and Box-file pipes (fd 3 on) are written, never read: nothing else
      // closes them, a socket of this process per command (issue 34).
      for (const stream of child.stdio.slice(3)) stream?.destroy();
      clearTimeout(this.timer);
      const exitCode = this.forcedExitCode ?? code ?? 128 + signalNumber(signal);
      // Leftovers of this command (background children) do not outlive it, as under bubblewrap.
      if (this.pid !== undefined && !this.pidNamespace) signalTree(this.pid, 'SIGKILL', true);
      // Output still in the pipes is read first: while a reader holds the output paused (a slow
      // SSE client), the pipes are not cut.
      const cutPipes = () => {
        if (this.outputPaused) {
          grace = setTimeout(cutPipes, PIPE_GRACE_MS);
          return;
        }
        child.stdout.destroy();
        child.stderr.destroy();
      };
      let grace = setTimeout(cutPipes, PIPE_GRACE_MS);
      child.on('close', () => {
        clearTimeout(grace);
        // A kill in progress finishes first: the exit is reported once every process of the
        // tree is gone, not while a killed child is still being torn down.
        Promise.resolve(this.killing).then(() => {
          this.#finish(exitCode);
        });
      });
    });
    this.#armTimeout(timeoutMs);
  }

  /**
   * The host could not start the process (`err`: spawn's error, e.g. EMFILE at the app's fd
   * limit, ENOENT for a missing bwrap): the command ends at once (126, the reason on its stderr)
   * and `spawned` rejects with a SpawnError, so the request that started it answers with the
   * host's failure instead of a command's exit.
   */
  #spawnFailed(err) {
    const failure = new SpawnError(err);
    this.#record('stderr', `${failure.message}\n`);
    this.#finish(126);
    this.#settleSpawn(failure);
  }

  #settleSpawn(failure) {
    if (this.spawnSettled) return;
    this.spawnSettled = true;
    if (failure) this.rejectSpawned(failure);
    else this.resolveSpawned();
  }

  /**
   * Puts bwrap in the Box's cgroups while it waits for its options (fd 3: bwrap reads them to
   * their end before it makes any namespace), then hands them over. The sandbox is therefore
   * born inside the Box's cgroups, and so is its cgroup namespace: the Box sees its own cgroup
   * as the root (`/proc/self/cgroup` reads `0::/`), not the host's path to it, whose name holds
   * the host's pid (box-limits.mjs).
   */
  async #setUpSandbox(child, spec) {
    // Not started (bwrap not found): the spawn's 'error' event tells.
    if (this.pid === undefined) return;
    await this.#joinCgroups(spec, this.pid);
    child.stdio[3].end(spec.argsData);
  }

  /**
   * Puts the command in its Box's cgroups (box-limits.mjs: v2 or v1, whichever the host chose),
   * whose pids and memory limits bound all of the Box's commands together; the Box removes them
   * when it stops.
   */
  async #joinCgroups(spec, pid) {
    if (!spec.cgroup) return;
    const problems = [...spec.cgroup.problems, ...(await joinBoxCgroup(spec.cgroup.dirs, pid))];
    // A plain process that is already gone has no limit left to note.
    if (this.exitCode !== null) return;
    for (const problem of problems) this.#record('stderr', `note: a Box limit could not be applied: ${problem}\n`);
  }

  #record(stream, data) {
    if (!data) return;
    const entry = { stream, data };
    if (!this.historyCut && this.logBytes + data.length <= MAX_LOG_BYTES && this.logBudget.take(data.length)) {
      this.logBytes += data.length;
      this.logs.push(entry);
    } else {
      if (!this.historyCut) {
        // One marker (outside the budget) says where the replay stops: a late follower is told,
        // not silently handed a gap.
        this.logs.push({
          stream: 'stderr',
          data: `[vite-hub-sandbox] log replay cut: this command printed more than the ${MAX_LOG_BYTES} bytes the Box host keeps (or its host-wide budget ran out); later output reached only readers that followed live\n`,
        });
      }
      this.historyCut = true;
    }
    this.emit('log', entry);
  }

  #finish(exitCode) {
    if (this.exitCode !== null) return;
    this.exitCode = exitCode;
    this.finishedAt = Date.now();
    this.emit('exit', exitCode);
  }

  get running() {
    return this.exitCode === null;
  }

  /**
   * Resolves with the exit code once the command has finished. A parked process is unref'd while
   * it waits (it never holds the app open); whoever waits for its end holds it from now on: a
   * wait with nothing ref'd would let the event loop empty before libuv reaps the process (a
   * script's last `await host.close()` exited 13, "unsettled top-level await").
   */
  waitExit() {
    if (!this.running) return Promise.resolve(this.exitCode);
    if (this.child) this.#hold(true);
    return new Promise((resolve) => this.once('exit', resolve));
  }

  /**
   * Stops reading the command's stdout/stderr (backpressure: once the pipe buffers are full, the
   * command blocks on its next write). No 'log' events until resumeOutput().
   */
  pauseOutput() {
    if (this.outputPaused || !this.child?.stdout) return;
    this.outputPaused = true;
    this.child.stdout.pause();
    this.child.stderr.pause();
  }

  /** Reads the command's output again after pauseOutput(). */
  resumeOutput() {
    if (!this.outputPaused) return;
    this.outputPaused = false;
    this.child.stdout.resume();
    this.child.stderr.resume();
  }

  /**
   * Writes `data` (a Buffer) to the command's stdin pipe; resolves once the pipe took it (the
   * command may not have read it yet), or rejects after `timeoutMs` (ms) when the command does
   * not read (the pipe is then closed: later writes are refused, as the SDK documents). Throws
   * `StdinUnavailable` when the command has no open stdin (not attached, closed, exited).
   */
  writeStdin(data, timeoutMs) {
    const stdin = this.child?.stdin;
    if (this.stdinClosed || !this.running || !stdin || stdin.destroyed) throw new StdinUnavailable(this);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.stdinClosed = true;
        stdin.destroy();
        reject(new StdinTimeout(timeoutMs));
      }, timeoutMs);
      stdin.write(data, (err) => {
        clearTimeout(timer);
        if (err) {
          this.stdinClosed = true;
          reject(new StdinUnavailable(this));
          return;
        }
        this.stdinBytes += data.length;
        resolve(this.stdinBytes);
      });
    });
  }

  /** Closes the command's stdin pipe (end of input once it read what was written); idempotent. */
  closeStdin() {
    if (!this.attachStdin) throw new StdinUnavailable(this);
    if (this.stdinClosed) return;
    this.stdinClosed = true;
    this.child?.stdin?.end();
  }

  /** Sends a signal (number or name) to the command's process group and tree. */
  signal(signal) {
    if (!this.running || this.pid === undefined) return;
    const num = signalNumber(signal);
    this.signalled ??= num;
    if (num === 9) this.killAll();
    else signalTree(this.pid, num, this.reaped);
  }

  /**
   * SIGKILLs the whole process tree now, synchronously, without waiting (for a process `exit`
   * listener, where nothing asynchronous runs any more).
   */
  killNow() {
    if (this.running && this.pid !== undefined) signalTree(this.pid, 'SIGKILL', this.reaped);
  }

  /** SIGKILLs the whole process tree and resolves once every process is gone and output closed. */
  async killAll() {
    // Exited in a PID namespace of its own: nothing of it is left (and a scan of /proc per
    // command made 128 concurrent stops take seconds).
    if (!this.running && this.reaped && this.pidNamespace) return;
    // Held from the kill to its end (waitExit): the kill's wait ends once the tree is dead, before
    // libuv has reaped the leader.
    if (this.running && this.child) this.#hold(true);
    if (this.pid !== undefined) {
      this.killing ??= killTreeAndWait(this.pid, () => this.reaped);
      await this.killing;
    }
    await this.waitExit();
  }

  /** Drops the kept output (the Box stopped) and returns its bytes to the host's budget. */
  releaseHistory() {
    this.logBudget.give(this.logBytes);
    this.logs = [];
    this.logBytes = 0;
    this.historyCut = true;
  }

  /** The `Command` wire object (exitCode null while running). */
  toJSON() {
    const json = {
      id: this.id,
      name: this.name,
      args: this.args,
      cwd: this.cwd,
      sessionId: this.sessionId,
      exitCode: this.exitCode,
      startedAt: this.startedAt,
    };
    if (this.finishedAt !== null) json.durationMs = this.finishedAt - this.startedAt;
    return json;
  }
}
