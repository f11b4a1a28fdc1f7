// The process and memory limits of a Box: which mechanism applies on this host (chosen once,
// reported in every session's `limits`) and the Box's cgroup (made at Box create, joined by each
// command's processes, removed at Box stop), so the limits bound the Box's commands together.
//
// Choice, in order: cgroup v2 when the host's own v2 cgroup offers the `pids` and `memory`
// controllers and lets this process enable them for child cgroups (the root cgroup, or a
// delegated one without processes); else cgroup v1 when the `pids` and `memory` hierarchies are
// writable; else rlimits only (processes and file size bounded, memory not). rlimits
// (isolation.mjs: file size, open files, processes) apply under every choice.
// Source: the kernel's Documentation/admin-guide/cgroup-v2.rst ("no internal processes",
// cgroup.subtree_control, pids.max, memory.max) and cgroup-v1/memory.rst (memory.limit_in_bytes).
import fs from 'node:fs';
import path from 'node:path';
import { leftBehind, livePidNamespaces } from './stale-boxes.mjs';

/** The controllers a Box's cgroup needs. */
const CONTROLLERS = ['pids', 'memory'];

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function writable(dir) {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.existsSync(path.join(dir, 'cgroup.procs'));
  } catch {
    return false;
  }
}

/**
 * The cgroup mounts of a `/proc/self/mountinfo` text: `{ v2: mount point | null, v1: { [controller]: mount point } }`.
 * Octal escapes (`\040`) in mount points are decoded.
 */
export function cgroupMounts(mountinfo) {
  const v1 = {};
  let v2 = null;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!right) continue;
    const mountPoint = left.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, oct) => String.fromCharCode(parseInt(oct, 8)));
    const [fsType, , superOptions = ''] = right.split(' ');
    if (!mountPoint) continue;
    if (fsType === 'cgroup2') v2 ??= mountPoint;
    else if (fsType === 'cgroup') {
      for (const option of superOptions.split(',')) if (CONTROLLERS.includes(option)) v1[option] ??= mountPoint;
    }
  }
  return { v2, v1 };
}

/**
 * This process's own cgroup v1 path per controller, from `/proc/self/cgroup` lines
 * `<id>:<controllers>:<path>` (cgroups(7)): `{ pids?, memory? }`.
 */
export function ownV1Cgroups(selfCgroup) {
  const own = {};
  for (const line of selfCgroup.split('\n')) {
    const match = /^\d+:([^:]+):(\/.*)$/.exec(line);
    if (!match) continue;
    for (const controller of match[1].split(',')) if (CONTROLLERS.includes(controller)) own[controller] ??= match[2];
  }
  return own;
}

/**
 * Picks the limit mechanism. `mountinfo` and `selfCgroup` are the texts of `/proc/self/mountinfo`
 * and `/proc/self/cgroup` (read here when not given). Resolves to
 * `{ kind: 'cgroup-v2', dir }` (the parent of Box cgroups, controllers enabled),
 * `{ kind: 'cgroup-v1', pids, memory }` (the two hierarchies' writable directories), or
 * `{ kind: 'rlimit' }`; each with `notes`: why a stronger mechanism was not chosen.
 */
export function chooseCgroups({
  mountinfo = readText('/proc/self/mountinfo'),
  selfCgroup = readText('/proc/self/cgroup'),
} = {}) {
  const notes = [];
  const mounts = cgroupMounts(mountinfo);
  if (mounts.v2) {
    const own = /^0::(\/.*)$/m.exec(selfCgroup)?.[1] ?? '/';
    const dir = path.resolve(mounts.v2, `.${own}`);
    const available = readText(path.join(dir, 'cgroup.controllers')).split(/\s+/);
    const missing = CONTROLLERS.filter((name) => !available.includes(name));
    if (missing.length > 0) notes.push(`cgroup v2 at ${dir} lacks the ${missing.join(' and ')} controller`);
    else if (!writable(dir)) notes.push(`cgroup v2 at ${dir} is not writable`);
    else {
      const enabled = readText(path.join(dir, 'cgroup.subtree_control')).split(/\s+/);
      const toEnable = CONTROLLERS.filter((name) => !enabled.includes(name));
      try {
        if (toEnable.length > 0)
          fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), toEnable.map((name) => `+${name}`).join(' '));
        return { kind: 'cgroup-v2', dir, notes };
      } catch (err) {
        // EBUSY: the cgroup holds processes and is not the root ("no internal processes"). When
        // they are only this process (a delegated scope of its own, systemd-run --user --scope),
        // it moves into a leaf child and Boxes become its siblings, inside the app's cgroup.
        if (err.code === 'EBUSY' && moveSelfToLeaf(dir)) {
          try {
            fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), toEnable.map((name) => `+${name}`).join(' '));
            return { kind: 'cgroup-v2', dir, notes };
          } catch (again) {
            notes.push(
              `cgroup v2 at ${dir} cannot enable ${toEnable.join(' and ')} for child cgroups (${again.code ?? again.message})`,
            );
          }
        } else {
          notes.push(
            `cgroup v2 at ${dir} cannot enable ${toEnable.join(' and ')} for child cgroups (${err.code ?? err.message})`,
          );
        }
      }
    }
  }
  // v1: below the host's own cgroup of each hierarchy, never the hierarchy's root, so Boxes stay
  // within the limits the app itself runs under.
  const own = ownV1Cgroups(selfCgroup);
  const pids = mounts.v1.pids && path.resolve(mounts.v1.pids, `.${own.pids ?? '/'}`);
  const memory = mounts.v1.memory && path.resolve(mounts.v1.memory, `.${own.memory ?? '/'}`);
  if (pids && memory && writable(pids) && writable(memory)) return { kind: 'cgroup-v1', pids, memory, notes };
  notes.push(
    `no writable cgroup v1 pids and memory cgroups below this process's own${pids ? ` (${pids}, ${memory})` : ''}`,
  );
  return { kind: 'rlimit', notes };
}

/**
 * Makes the Box's cgroup, one per hierarchy (`<parent>/<name>`, `name` the Box directory's
 * `vite-hub-box-<pidns>-<pid>-XXXXXX`, so a later host can sweep it once the owning process is gone),
 * limited to `limits.pids` processes and `limits.memoryBytes` of memory (no swap under v2) for all
 * of the Box's commands together: each command's processes join it directly (joinBoxCgroup), so
 * no nested cgroup (and no v1 `memory.use_hierarchy`) is involved. Returns `{ dirs, problems }`:
 * the directories made (for removeBoxCgroup) and one line per limit that could not be applied.
 */
export function makeBoxCgroup(choice, name, limits) {
  const dirs = [];
  const problems = [];
  let steps = [];
  if (choice?.kind === 'cgroup-v2') {
    steps = [
      [
        choice.dir,
        [
          ['pids.max', limits.pids],
          ['memory.max', limits.memoryBytes],
          ['memory.swap.max', 0],
        ],
      ],
    ];
  } else if (choice?.kind === 'cgroup-v1') {
    steps = [
      [choice.pids, [['pids.max', limits.pids]]],
      [choice.memory, [['memory.limit_in_bytes', limits.memoryBytes]]],
    ];
  }
  for (const [parent, files] of steps) {
    const dir = path.join(parent, name);
    try {
      makeDir(dir);
      dirs.push(dir);
    } catch (err) {
      problems.push(`cgroup ${dir}: ${err.code ?? err.message}`);
      continue;
    }
    for (const [file, value] of files) {
      try {
        fs.writeFileSync(path.join(dir, file), String(value));
      } catch (err) {
        // memory.swap.max is absent without swap accounting: not a limit of ours to report.
        if (file !== 'memory.swap.max' || err.code !== 'ENOENT') problems.push(`${file}: ${err.code ?? err.message}`);
      }
    }
  }
  return { dirs, problems };
}

/**
 * Moves this process into `<dir>/vite-hub-host` when it is the only process of `dir`: true when
 * moved. Other processes in `dir` (the app's own children or shell) are never moved.
 */
function moveSelfToLeaf(dir) {
  const others = readText(path.join(dir, 'cgroup.procs'))
    .split('\n')
    .filter((pid) => pid && Number(pid) !== process.pid);
  if (others.length > 0) return false;
  try {
    const leaf = path.join(dir, 'vite-hub-host');
    fs.mkdirSync(leaf, { recursive: true });
    fs.writeFileSync(path.join(leaf, 'cgroup.procs'), String(process.pid));
    return true;
  } catch {
    return false;
  }
}

/** mkdir; an empty leftover of the same name (a removal that found it busy) is removed first. */
function makeDir(dir) {
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    fs.rmdirSync(dir);
    fs.mkdirSync(dir);
  }
}

/**
 * Puts `pid` (and the processes it forks later) in the Box's cgroups; resolves to one line per
 * failure, never rejects. Written off the main thread: moving a process into a cgroup v1 `pids`
 * hierarchy waits for the kernel (5-23 ms measured on a 6.18 kernel; the `memory` one takes
 * 0.1 ms), which written synchronously blocked the host's event loop, and the app's with an
 * in-process host, on every command.
 */
export async function joinBoxCgroup(dirs, pid) {
  const joined = await Promise.allSettled(
    dirs.map((dir) => fs.promises.writeFile(path.join(dir, 'cgroup.procs'), String(pid))),
  );
  return joined.flatMap((outcome, i) =>
    outcome.status === 'rejected'
      ? [`${path.join(dirs[i], 'cgroup.procs')}: ${outcome.reason.code ?? outcome.reason.message}`]
      : [],
  );
}

/** The pids still in a cgroup directory (none when unreadable). */
function cgroupPids(dir) {
  return readText(path.join(dir, 'cgroup.procs')).split('\n').filter(Boolean).map(Number);
}

/**
 * Removes the Box's cgroups once its commands are gone. A cgroup the kernel still counts exiting
 * processes in is EBUSY for a moment: retried for up to `waitMs`; processes still in one then
 * (none of a stopped Box should be) are SIGKILLed and it is tried once more. Any other failure
 * (e.g. ENOTEMPTY: not a cgroup, or one with child cgroups) leaves the directory as it is.
 * Resolves to the directories left, [] when all are gone; never rejects.
 */
export async function removeBoxCgroup(dirs, { waitMs = 2000 } = {}) {
  const deadline = Date.now() + waitMs;
  let busy = [...dirs];
  const left = [];
  for (;;) {
    busy = busy.filter((dir) => {
      const outcome = tryRemove(dir);
      if (outcome !== 'busy' && outcome !== 'removed') left.push(dir);
      return outcome === 'busy';
    });
    if (busy.length === 0 || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (busy.length > 0) {
    for (const dir of busy) killAll(dir);
    await new Promise((resolve) => setTimeout(resolve, 100));
    left.push(...busy.filter((dir) => tryRemove(dir) !== 'removed'));
  }
  return left;
}

/** Synchronous removal for the host's exit path: one try each (a busy one is killed, tried again). */
export function removeBoxCgroupNow(dirs) {
  for (const dir of dirs) {
    if (tryRemove(dir) !== 'busy') continue;
    killAll(dir);
    tryRemove(dir);
  }
}

function killAll(dir) {
  for (const pid of cgroupPids(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** rmdir: 'removed' (or already gone), 'busy' (EBUSY: processes still in the cgroup) or the error code. */
function tryRemove(dir) {
  try {
    fs.rmdirSync(dir);
    return 'removed';
  } catch (err) {
    if (err.code === 'ENOENT') return 'removed';
    return err.code === 'EBUSY' ? 'busy' : (err.code ?? 'failed');
  }
}

/**
 * Removes the Box cgroups (`vite-hub-box-<pidns>-<pid>-XXXXXX`) under the chosen hierarchies
 * that were left behind (stale-boxes.mjs leftBehind: a host that ended without stopping its
 * Boxes, or a pid namespace that is gone; `live` as for sweepStaleBoxDirs), killing any process
 * still in them. Resolves to the removed directories, sorted; never rejects.
 */
export async function sweepStaleCgroups(choice, live = livePidNamespaces()) {
  const parents =
    choice?.kind === 'cgroup-v2' ? [choice.dir] : choice?.kind === 'cgroup-v1' ? [choice.pids, choice.memory] : [];
  const stale = [];
  for (const parent of parents) {
    let entries = [];
    try {
      entries = fs.readdirSync(parent, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (leftBehind(entry.name, live)) stale.push(path.join(parent, entry.name));
    }
  }
  const left = await removeBoxCgroup(stale, { waitMs: 0 });
  return stale.filter((dir) => !left.includes(dir)).sort();
}
