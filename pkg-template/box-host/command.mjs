// One Box command: a real process (argv, no shell) in its own process group, its output history
// (replayable for log followers), its exit code, and the timeout that kills the whole tree.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { killTreeAndWait, signalTree } from './process-tree.mjs';

/** Output kept per command for replay (bytes of text); later output is dropped from history. */
export const MAX_LOG_BYTES = 64 * 1024 * 1024;
/** How long to wait for the output pipes to close after the main process exited (ms). */
const PIPE_GRACE_MS = 200;

function signalNumber(signal) {
  return typeof signal === 'number' ? signal : os.constants.signals[signal] ?? 9;
}

/**
 * Events: 'log' ({stream, data}), 'exit' (exitCode). `logs` holds the history, `exitCode` is null
 * while running. Exit codes: the process's own code, or 128 + signal number (137 on timeout).
 */
export class BoxCommand extends EventEmitter {
  constructor({ id, sessionId, name, args, cwd, spec, timeoutMs }) {
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
    this.forcedExitCode = null;
    this.reaped = false;
    this.outputPaused = false;
    this.#start(spec, timeoutMs);
  }

  #start(spec, timeoutMs) {
    const child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.pid = child.pid;
    for (const stream of ['stdout', 'stderr']) {
      const decoder = new StringDecoder('utf8');
      child[stream].on('data', (chunk) => this.#record(stream, decoder.write(chunk)));
      child[stream].on('end', () => this.#record(stream, decoder.end()));
    }
    child.on('error', (err) => {
      if (this.pid === undefined) {
        this.#record('stderr', `${this.name}: ${err.code === 'ENOENT' ? 'command not found' : err.message}\n`);
        this.#finish(err.code === 'ENOENT' ? 127 : 126);
      }
    });
    child.on('exit', (code, signal) => {
      this.reaped = true;
      clearTimeout(this.timer);
      const exitCode = this.forcedExitCode ?? (code ?? 128 + signalNumber(signal));
      // Leftovers of this command (background children) do not outlive it, as under bubblewrap.
      if (this.pid !== undefined) signalTree(this.pid, 'SIGKILL', true);
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
        this.#finish(exitCode);
      });
    });
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.forcedExitCode = 137;
        this.killAll();
      }, timeoutMs);
    }
  }

  #record(stream, data) {
    if (!data) return;
    const entry = { stream, data };
    if (this.logBytes < MAX_LOG_BYTES) {
      this.logBytes += data.length;
      this.logs.push(entry);
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

  /** Resolves with the exit code once the command has finished. */
  waitExit() {
    if (!this.running) return Promise.resolve(this.exitCode);
    return new Promise((resolve) => this.once('exit', resolve));
  }

  /**
   * Stops reading the command's stdout/stderr (backpressure: once the pipe buffers are full, the
   * command blocks on its next write). No 'log' events until resumeOutput().
   */
  pauseOutput() {
    if (this.outputPaused || !this.child) return;
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

  /** Sends a signal (number or name) to the command's process group and tree. */
  signal(signal) {
    if (!this.running || this.pid === undefined) return;
    const num = signalNumber(signal);
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
    if (this.pid !== undefined) await killTreeAndWait(this.pid, () => this.reaped);
    await this.waitExit();
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
