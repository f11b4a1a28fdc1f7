// The Box engine: one Box = one private host directory (its `/`) plus the processes running in it.
// A Box runs commands, reads and writes files inside its directory, and stops (kills every
// process tree, waits until they are gone, removes the directory).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { extractTarGz } from './archive.mjs';
import { BoxCommand, outOfFds } from './command.mjs';
import { startBoxNetwork } from './box-network.mjs';
import { DEFAULT_DISK_BYTES } from './box-disk.mjs';
import { makeBoxRoot, removeBoxRoot, removeBoxRootNow } from './box-spares.mjs';
import { BOX_HOME, BOX_LIMITS, cwdVisible, executionAuthority, limitsReport, spawnSpec } from './isolation.mjs';
import { makeBoxCgroup, removeBoxCgroup, removeBoxCgroupNow } from './box-limits.mjs';
import { missingToolMessage } from './box-toolchain.mjs';
import {
  PARKED_HARNESS_PATH,
  PARKED_NODE_ARGS,
  PARKED_NODE_PATH,
  PARKED_NODE_SOURCE,
  parkedNodeFits,
} from './parked-node.mjs';
import { acquireBoxUid, releaseBoxUid } from './box-user.mjs';
import {
  BoxPathError,
  ensureBoxDir,
  mkdirInBox,
  normalizeBoxPath,
  openBoxFileForRead,
  resolveExisting,
} from './paths.mjs';

/** The session working directory of a Vercel Box (a Box path); the default work directory. */
export const SESSION_CWD = '/vercel/sandbox';
/** Default Box lifetime (ms); the Box stops itself after it. */
export const DEFAULT_TIMEOUT_MS = 300_000;
/** Largest delay a JS timer takes (2^31 − 1 ms); a larger one would fire after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A request the Box cannot honour (answered with `status` and `code`). */
export class BoxRequestError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function newId(prefix) {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a `Record<string,string>` env object (throws BoxRequestError 400). */
export function checkEnv(env) {
  if (env === undefined) return {};
  if (env === null || typeof env !== 'object' || Array.isArray(env)) {
    throw new BoxRequestError(400, 'bad_request', 'env must be an object of strings');
  }
  for (const [key, value] of Object.entries(env)) {
    if (!ENV_KEY.test(key) || typeof value !== 'string' || value.includes('\0')) {
      throw new BoxRequestError(400, 'bad_request', `invalid env entry ${JSON.stringify(key)}`);
    }
  }
  return { ...env };
}

/**
 * The program a command runs: `command`, or the `$0` of `sh -c <script> <program> <args…>`, the
 * form in which a Run installs packages (crates/core/src/run/install.rs `sealed_install`: the install's
 * argv after the script) and sessions run shell lines.
 */
function programOf(command, args) {
  return command === 'sh' && args[0] === '-c' && args.length > 2 ? args[2] : command;
}

/** Default vCPUs of a Box (a Vercel Sandbox's default). */
const DEFAULT_VCPUS = 2;

/** The memory limit of a Box of `vcpus` (default 2), in bytes: `vcpus × 2048` MiB, as Vercel sizes a Sandbox. */
export function boxMemoryBytes(vcpus = DEFAULT_VCPUS) {
  return vcpus * 2048 * 1024 * 1024;
}

export class Box {
  /**
   * Creates the Box directory `<parentDir>/vite-hub-box-<pidns>-<pid>-XXXXXX` (named after this process,
   * so a later host can sweep it once the process is gone) with `vercel/sandbox`, `tmp` and the
   * home dir.
   * `options`: { name, isolation ('bubblewrap'|'none'), networkDenied, env, timeoutMs, vcpus,
   * workDir (a Box path: the default cwd, bound read-write; default `/vercel/sandbox`), diskBytes
   * (its writable space when the host can mount a tmpfs, box-disk.mjs), spares (the host's
   * BoxSpares: a network made ahead, box-spares.mjs), making (a BoxInMaking, box-spares.mjs: what
   * the host's exit path removes while the Box is being created) }.
   */
  static async create(parentDir, options) {
    const diskBytes = options.diskBytes ?? DEFAULT_DISK_BYTES;
    const diskMounted = options.features?.diskBound === true;
    // A root host's Box runs as a host uid of its own, which owns the Box's directories.
    const boxUid =
      options.isolation === 'bubblewrap' && options.features?.boxUsers === true ? acquireBoxUid() : undefined;
    let root;
    try {
      root = await makeBoxRoot(parentDir, { diskBytes, mountDisk: diskMounted, making: options.making });
    } catch (err) {
      if (boxUid !== undefined) releaseBoxUid(boxUid);
      // The cause stays: out of fds (its mount's spawn), the registry answers 503.
      throw Object.assign(new BoxRequestError(500, 'internal_error', err.message), { cause: err });
    }
    let network;
    try {
      const dirs = [options.workDir ?? SESSION_CWD, '/tmp', BOX_HOME];
      for (const sub of dirs) {
        await fs.promises.mkdir(path.join(root, sub), { recursive: true, mode: 0o755 });
      }
      await fs.promises.chmod(path.join(root, 'tmp'), 0o1777);
      // The root first: its owner is the Box user for everything the host creates later (box-user.mjs).
      if (boxUid !== undefined) {
        for (const dir of [root, ...dirs.map((sub) => path.join(root, sub))])
          await fs.promises.chown(dir, boxUid, boxUid);
      }
      if (options.isolation === 'bubblewrap' && !options.networkDenied && options.features?.netTool) {
        network = await options.spares?.network();
        try {
          network ??= await startBoxNetwork();
        } catch (err) {
          throw Object.assign(
            new BoxRequestError(500, 'internal_error', `the Box network could not be set up: ${err.message}`),
            { cause: err },
          );
        }
      }
      return new Box(root, { ...options, network, diskBytes, diskMounted, boxUid });
    } catch (err) {
      // What was made is undone; the error stays the cause (EMFILE: 503), never the undoing's.
      network?.stop();
      await removeBoxRoot(root, diskMounted).catch(() => {});
      if (boxUid !== undefined) releaseBoxUid(boxUid);
      throw err;
    }
  }

  constructor(
    root,
    {
      name,
      isolation,
      networkDenied,
      env,
      timeoutMs,
      vcpus,
      workDir,
      onStopped,
      logBudget,
      features,
      network,
      sourceSnapshotId,
      diskBytes,
      diskMounted,
      spares,
      boxUid,
    },
  ) {
    /** Whether a spare's parked process suits this Box's commands (the registry sets it). */
    this.fitsSpare = false;
    /** What this Box counts against the host's memory bound, in bytes (box-queue.mjs; the registry sets it). */
    this.chargeBytes = 0;
    this.root = root;
    /** The host uid (= gid) the Box's commands run as, when it has one of its own (box-user.mjs). */
    this.boxUid = boxUid;
    this.workDir = workDir ?? SESSION_CWD;
    this.id = newId('sbx');
    this.name = name ?? this.id;
    this.isolation = isolation;
    this.networkDenied = networkDenied;
    this.env = env;
    this.timeoutMs = timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.vcpus = vcpus ?? DEFAULT_VCPUS;
    this.status = 'running';
    this.createdAt = Date.now();
    this.stoppedAt = undefined;
    this.commands = new Map();
    this.onStopped = onStopped;
    this.sourceSnapshotId = sourceSnapshotId;
    this.logBudget = logBudget;
    this.features = features;
    this.network = network;
    this.spares = spares;
    this.diskMounted = diskMounted === true;
    this.limits = limitsReport(features, {
      memoryBytes: this.memoryBytes,
      diskBytes: diskBytes ?? DEFAULT_DISK_BYTES,
      isolation,
    });
    // One cgroup (per hierarchy) for all of the Box's commands, named after its directory
    // (`vite-hub-box-<pidns>-<pid>-XXXXXX`, swept like it when its host is gone): the process and memory
    // limits are the Box's, not each command's. Limits it could not apply are told to every
    // command (stderr), as the commands run without them.
    this.cgroup = makeBoxCgroup(features?.cgroup, path.basename(root), {
      pids: BOX_LIMITS.pids,
      memoryBytes: this.memoryBytes,
    });
    this.executionAuthority = executionAuthority(isolation, networkDenied, network !== undefined);
    this.#armLifetime();
  }

  #armLifetime() {
    clearTimeout(this.lifetime);
    const remaining = this.createdAt + this.timeoutMs - Date.now();
    // A lifetime extended past the timer maximum is re-armed when that much has passed.
    this.lifetime =
      remaining > MAX_TIMER_MS
        ? setTimeout(() => this.#armLifetime(), MAX_TIMER_MS)
        : setTimeout(() => this.stop().catch(() => {}), Math.max(0, remaining));
    this.lifetime.unref();
  }

  /** Makes the Box live at least `ms` more from now (never shortens its lifetime). */
  keepAliveFor(ms) {
    const wanted = Date.now() + ms - this.createdAt;
    if (!this.running || wanted <= this.timeoutMs) return;
    this.timeoutMs = wanted;
    this.#armLifetime();
  }

  /** Adds `ms` to the Box lifetime. */
  extendTimeout(ms) {
    this.timeoutMs += ms;
    this.#armLifetime();
  }

  get running() {
    return this.status === 'running';
  }

  /** Host path of the Box directory `boxCwd` (must exist and be visible to commands). */
  #commandCwd(boxCwd) {
    const host = resolveExisting(this.root, boxCwd);
    if (!host || !fs.statSync(host).isDirectory()) {
      throw new BoxRequestError(400, 'bad_request', `cwd is not a directory in the Box: ${boxCwd}`);
    }
    if (!cwdVisible(this.isolation, boxCwd, this.workDir)) {
      throw new BoxRequestError(400, 'bad_request', `cwd must be under ${this.workDir}, /tmp or ${BOX_HOME}`);
    }
    return host;
  }

  /** Starts a command: { command, args?, cwd?, env?, timeout? (ms) } → BoxCommand. */
  runCommand({ command, args = [], cwd, env, timeout, attachStdin = false }) {
    if (typeof command !== 'string' || command === '' || command.includes('\0')) {
      throw new BoxRequestError(400, 'bad_request', 'command must be a non-empty string');
    }
    // A leading '-' would be read as an option by the wrappers that exec the command (prlimit,
    // /bin/sh's exec, sandbox-exec); no program is named so.
    if (command.startsWith('-'))
      throw new BoxRequestError(400, 'bad_request', `command must not start with '-', got ${JSON.stringify(command)}`);
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string' || a.includes('\0'))) {
      throw new BoxRequestError(400, 'bad_request', 'args must be an array of strings');
    }
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout >= 0 && timeout <= MAX_TIMER_MS)) {
      throw new BoxRequestError(400, 'bad_request', `timeout must be a number of ms from 0 to ${MAX_TIMER_MS}`);
    }
    if (typeof attachStdin !== 'boolean')
      throw new BoxRequestError(400, 'bad_request', 'attachStdin must be a boolean');
    // A package manager the app's toolchain lacks is a set-up problem of this machine, said as
    // such before anything starts (503: SANDBOX_PROVIDER_UNAVAILABLE), never a command's exit 127.
    const missingTool = this.features?.toolchain
      ? missingToolMessage(this.features.toolchain, programOf(command, args))
      : null;
    if (missingTool) throw new BoxRequestError(503, 'tool_missing', missingTool);
    if (this.boxUid !== undefined && this.features?.toolchainProblem)
      throw new BoxRequestError(503, 'toolchain_unreachable', this.features.toolchainProblem);
    const boxCwd = normalizeBoxPath(cwd ?? this.workDir, this.workDir);
    const cwdHost = this.#commandCwd(boxCwd);
    const commandEnv = { ...this.env, ...checkEnv(env) };
    // A parked process's stdin carries its handover line: a command that reads its own stdin
    // starts a process of its own.
    const parked = attachStdin ? undefined : this.#takeParked();
    if (parked && parkedNodeFits(parked.env, { command, args, env: commandEnv })) {
      parked.command.handOver({
        id: newId('cmd'),
        name: command,
        args,
        cwd: boxCwd,
        seenCwd: boxCwd,
        timeoutMs: timeout,
      });
      this.handedOver = true;
      return this.#started(parked.command);
    }
    // Any other command starts its own process: the parked one is of no use any more.
    this.#endParked(parked);
    const spec = this.#spec({
      command,
      args,
      cwd: boxCwd,
      cwdHost,
      env: commandEnv,
      ...(attachStdin ? { stdin: 'pipe' } : {}),
    });
    const cmd = new BoxCommand({
      id: newId('cmd'),
      sessionId: this.id,
      name: command,
      args,
      cwd: boxCwd,
      spec,
      timeoutMs: timeout,
      logBudget: this.logBudget,
      attachStdin,
    });
    return this.#started(cmd);
  }

  /**
   * runCommand, resolved once the process runs. A process the host could not start (command.mjs
   * SpawnError: EMFILE at the app's fd limit, a missing bwrap) is forgotten and rejects with a
   * BoxRequestError 503 `spawn_failed`: a failure of this machine, never a command's exit.
   */
  async startCommand(body) {
    const cmd = this.runCommand(body);
    try {
      await cmd.spawned;
    } catch (err) {
      this.commands.delete(cmd.id);
      throw new BoxRequestError(503, 'spawn_failed', err.message);
    }
    return cmd;
  }

  /**
   * The spawn spec (isolation.mjs spawnSpec) of a process in this Box: its isolation, directories,
   * network, limits and user, with the command's own `command`, `args`, `cwd`, `cwdHost`, `env`
   * and the optional `readOnlyFiles` and `stdin`. Every process of the Box, parked or not, starts so.
   */
  #spec(command) {
    return spawnSpec({
      isolation: this.isolation,
      root: this.root,
      workDir: this.workDir,
      networkDenied: this.networkDenied,
      // Under deny-all a Box network kept from an allow-all time is left aside (network-policy.mjs).
      network: this.networkDenied ? undefined : this.network,
      features: this.features,
      cgroup: this.cgroup,
      boxUid: this.boxUid,
      ...command,
    });
  }

  #started(cmd) {
    this.commands.set(cmd.id, cmd);
    cmd.once('exit', () => this.#refillSpares());
    return cmd;
  }

  /**
   * Starts a parked Node process in this Box (parked-node.mjs), under the spec its commands get,
   * in its work directory; its first command takes it when it fits, else ends it. Bubblewrap
   * only (the script is shown at PARKED_NODE_PATH). With `harness` (the Run's harness source, as
   * the runtime stages it) the process imports it before its handover (shown at
   * PARKED_HARNESS_PATH), so a Run whose staged harness is that text imports only its entry.
   * Throws what a spawn throws.
   */
  park(harness) {
    const env = { ...this.env };
    const spec = this.#spec({
      command: 'node',
      args: PARKED_NODE_ARGS,
      cwd: this.workDir,
      cwdHost: this.workDirHost,
      env,
      readOnlyFiles: [
        { path: PARKED_NODE_PATH, data: PARKED_NODE_SOURCE },
        ...(typeof harness === 'string' ? [{ path: PARKED_HARNESS_PATH, data: harness }] : []),
      ],
      stdin: 'pipe',
    });
    const command = new BoxCommand({
      id: newId('cmd'),
      sessionId: this.id,
      name: 'node',
      args: PARKED_NODE_ARGS,
      cwd: this.workDir,
      spec,
      timeoutMs: undefined,
      logBudget: this.logBudget,
      parked: true,
    });
    this.parked = { command, env };
    // Gone before its command came (killed, out of memory): the Box's commands start as usual.
    command.once('exit', () => {
      if (this.parked?.command === command) this.parked = undefined;
    });
  }

  /** Every process of the Box: its commands, its parked process, and one ended for another command. */
  #processes() {
    return [...this.commands.values(), this.parked?.command, this.endedParked].filter(Boolean);
  }

  /** Whether a parked process waits in this Box. */
  get hasParked() {
    return this.parked !== undefined && this.parked.command.running;
  }

  #takeParked() {
    const parked = this.parked;
    this.parked = undefined;
    return parked?.command.running ? parked : undefined;
  }

  /** Ends a taken parked process (its end is awaited again when the Box stops, before its cgroup goes). */
  #endParked(parked) {
    if (!parked) return;
    this.endedParked = parked.command;
    parked.command.killAll().catch(() => {});
  }

  /** Ends the parked process, if any: it started under a network policy that changed (network-policy.mjs). */
  retireParked() {
    this.#endParked(this.#takeParked());
  }

  /**
   * Gives a spare Box (parked-boxes.mjs) to a create: its name, lifetime (counted from now),
   * snapshot source and stop callback become the create's.
   */
  claim({ name, timeoutMs, sourceSnapshotId, onStopped }) {
    this.name = name ?? this.id;
    this.timeoutMs = timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.createdAt = Date.now();
    this.sourceSnapshotId = sourceSnapshotId;
    this.onStopped = onStopped;
    this.#armLifetime();
  }

  /**
   * Once per Box, when its first command exits (or at its stop): the host's spares are made anew.
   * Not when that command starts: each spare costs the host's event loop a few spawns (bwrap, the
   * network helper, the parked Node), which then landed in the middle of the command's Run.
   */
  #refillSpares() {
    if (this.refilled || !this.spares) return;
    this.refilled = true;
    setImmediate(() => this.spares.refill());
  }

  /** Writes a gzip'd tar (bytes) extracted relative to the Box directory `boxCwd`. */
  async writeArchive(boxCwd, body) {
    const dir = normalizeBoxPath(boxCwd || '/', '/');
    ensureBoxDir(this.root, dir);
    await extractTarGz(this.root, dir, body);
  }

  /**
   * An open fd (the caller closes it) of an existing regular Box file and its size, or null when
   * missing; opened first and checked after, so a symlink swapped in meanwhile cannot redirect it.
   */
  openForRead(boxPath, cwd) {
    const fd = openBoxFileForRead(this.root, normalizeBoxPath(boxPath, normalizeBoxPath(cwd ?? this.workDir)));
    if (fd === null) return null;
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      fs.closeSync(fd);
      throw new BoxRequestError(400, 'bad_request', `not a regular file: ${boxPath}`);
    }
    return { fd, size: st.size };
  }

  /** Creates one directory (not recursive). */
  mkdir(boxPath, cwd) {
    const target = normalizeBoxPath(boxPath, normalizeBoxPath(cwd ?? this.workDir));
    try {
      mkdirInBox(this.root, target);
    } catch (err) {
      if (err.code === 'ENOENT')
        throw new BoxRequestError(400, 'bad_request', `parent directory does not exist: ${target}`);
      if (err.code === 'EEXIST') throw new BoxRequestError(400, 'bad_request', `already exists: ${target}`);
      if (err.code === 'ENOTDIR') throw new BoxPathError(`not a directory: ${path.posix.dirname(target)}`);
      throw err;
    }
  }

  /** Memory of the Box, all its commands together (bytes): the session's `memory` (`vcpus × 2048` MiB). */
  get memoryBytes() {
    return boxMemoryBytes(this.vcpus);
  }

  /** Host path of the Box's work directory. */
  get workDirHost() {
    return path.join(this.root, this.workDir);
  }

  /**
   * Stops the Box: kills every command tree, waits until all are gone, then (when given) runs
   * `keep(this)` (a snapshot moves the work directory away here), and removes the directory and
   * the Box's cgroups.
   * The Box is `snapshotting` while `keep` runs. Resolves to what `keep` resolved to; a `keep`
   * that throws still leaves the Box stopped and its directory removed.
   */
  async stop(keep) {
    if (this.stopping) {
      await this.stopping;
      return undefined;
    }
    this.status = keep ? 'snapshotting' : 'stopping';
    let kept;
    /** @type {Error | undefined} The first step that failed. */
    let failure;
    this.stopping = (async () => {
      clearTimeout(this.lifetime);
      this.#refillSpares();
      // Every step runs even when one before it failed (out of fds, a busy mount): the Box ends
      // as stopped and its slot is given back; the first failure is thrown after.
      const step = async (work) => {
        try {
          await work();
        } catch (err) {
          failure ??= err;
        }
      };
      await step(() => Promise.all(this.#processes().map((cmd) => cmd.killAll())));
      await step(async () => {
        if (keep) kept = await keep(this);
      });
      this.network?.stop();
      await step(() => removeBoxRoot(this.root, this.diskMounted));
      // After the tmpfs is gone: its pages were charged to the Box's memory cgroup.
      await step(() => removeBoxCgroup(this.cgroup.dirs));
      // Its processes are gone with their PID namespaces, its files with its directory.
      if (this.boxUid !== undefined) releaseBoxUid(this.boxUid);
      // A stopped Box keeps its description, not its output.
      for (const cmd of this.commands.values()) cmd.releaseHistory();
      this.status = 'stopped';
      this.stoppedAt = Date.now();
      this.onStopped?.(this);
    })();
    await this.stopping;
    // Out of fds (`umount` could not start for OUT_OF_FDS_WAIT_MS): this machine's failure, 503.
    if (failure && outOfFds(failure))
      throw new BoxRequestError(
        503,
        'spawn_failed',
        `the Box stopped, but not all it held was removed: ${failure.message}`,
      );
    if (failure) throw failure;
    return kept;
  }

  /**
   * Synchronous last resort when the host's process exits mid-Run: SIGKILLs every command tree
   * and removes the Box directory (`fs.rmSync`) and its cgroups (one try; the next host's sweep
   * removes one still busy). Never throws.
   */
  removeNow() {
    for (const cmd of this.#processes()) {
      try {
        cmd.killNow();
      } catch {
        // /proc unreadable or the tree already gone: the directory is still removed below
      }
    }
    this.network?.stop();
    removeBoxRootNow(this.root, this.diskMounted);
    removeBoxCgroupNow(this.cgroup.dirs);
  }

  /** The `Session` wire object (plus the passthrough `executionAuthority`). */
  sessionJSON() {
    const json = {
      id: this.id,
      memory: this.vcpus * 2048,
      vcpus: this.vcpus,
      region: 'local',
      timeout: this.timeoutMs,
      status: this.status,
      requestedAt: this.createdAt,
      startedAt: this.createdAt,
      createdAt: this.createdAt,
      updatedAt: this.stoppedAt ?? this.createdAt,
      cwd: SESSION_CWD,
      networkPolicy: { mode: this.networkDenied ? 'deny-all' : 'allow-all' },
      executionAuthority: this.executionAuthority,
      limits: this.limits,
    };
    if (this.sourceSnapshotId !== undefined) json.sourceSnapshotId = this.sourceSnapshotId;
    if (this.stoppedAt !== undefined) {
      json.stoppedAt = this.stoppedAt;
      json.duration = this.stoppedAt - this.createdAt;
    }
    return json;
  }

  /** The `Sandbox` wire object. */
  sandboxJSON() {
    return {
      name: this.name,
      persistent: false,
      region: 'local',
      vcpus: this.vcpus,
      memory: this.vcpus * 2048,
      timeout: this.timeoutMs,
      networkPolicy: { mode: this.networkDenied ? 'deny-all' : 'allow-all' },
      createdAt: this.createdAt,
      updatedAt: this.stoppedAt ?? this.createdAt,
      ...(this.running ? { expiresAt: this.createdAt + this.timeoutMs } : {}),
      currentSessionId: this.id,
      status: this.status,
      cwd: SESSION_CWD,
    };
  }
}
