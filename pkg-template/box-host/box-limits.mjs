// Per-command process and memory limits of Box commands: which mechanism applies on this host
// (chosen once, reported in every session's `limits`) and the cgroup files written per command.
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

/** The controllers a Box command needs. */
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
 * Picks the limit mechanism. `mountinfo` and `selfCgroup` are the texts of `/proc/self/mountinfo`
 * and `/proc/self/cgroup` (read here when not given). Resolves to
 * `{ kind: 'cgroup-v2', dir }` (the parent of per-command cgroups, controllers enabled),
 * `{ kind: 'cgroup-v1', pids, memory }` (the two hierarchies' writable directories), or
 * `{ kind: 'rlimit' }`; each with `notes`: why a stronger mechanism was not chosen.
 */
export function chooseCgroups({ mountinfo = readText('/proc/self/mountinfo'), selfCgroup = readText('/proc/self/cgroup') } = {}) {
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
        if (toEnable.length > 0) fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), toEnable.map((name) => `+${name}`).join(' '));
        return { kind: 'cgroup-v2', dir, notes };
      } catch (err) {
        // EBUSY: the cgroup holds processes (the host's own) and is not the root.
        notes.push(`cgroup v2 at ${dir} cannot enable ${toEnable.join(' and ')} for child cgroups (${err.code ?? err.message})`);
      }
    }
  }
  const pids = mounts.v1.pids;
  const memory = mounts.v1.memory;
  if (pids && memory && writable(pids) && writable(memory)) return { kind: 'cgroup-v1', pids, memory, notes };
  notes.push('no writable cgroup v1 pids and memory hierarchies');
  return { kind: 'rlimit', notes };
}

/**
 * Puts `pid` in a cgroup of its own (`vite-hub-<name>`) with `limits.pids` processes and
 * `limits.memoryBytes` of memory, under the chosen mechanism. Returns `{ dirs, problems }`: the
 * cgroup directories made (for releaseCgroups) and one line per limit that could not be applied.
 */
export function joinCgroups(choice, name, pid, limits) {
  const dirs = [];
  const problems = [];
  let steps = [];
  if (choice?.kind === 'cgroup-v2') {
    steps = [[choice.dir, [['pids.max', limits.pids], ['memory.max', limits.memoryBytes], ['memory.swap.max', 0]]]];
  } else if (choice?.kind === 'cgroup-v1') {
    steps = [[choice.pids, [['pids.max', limits.pids]]], [choice.memory, [['memory.limit_in_bytes', limits.memoryBytes]]]];
  }
  for (const [parent, files] of steps) {
    const dir = path.join(parent, `vite-hub-${name}`);
    try {
      fs.mkdirSync(dir);
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
    try {
      fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
    } catch (err) {
      problems.push(`${path.join(dir, 'cgroup.procs')}: ${err.code ?? err.message}`);
    }
  }
  return { dirs, problems };
}

/** Removes a command's cgroups once its processes are gone (a busy or missing one is left). */
export function releaseCgroups(dirs) {
  for (const dir of dirs) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // still has tasks (torn down by the kernel soon) or already gone
    }
  }
}
