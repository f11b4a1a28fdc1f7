// Process trees on Linux, read from /proc: find every process of a command (its process group,
// its session and all descendants), signal them, and wait until they are gone.
import fs from 'node:fs';

function readProcTable() {
  const table = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    table.set(Number(name), {
      state: fields[0],
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      sid: Number(fields[3]),
    });
  }
  return table;
}

/** Live (non-zombie) pids of the tree rooted at `rootPid` (a process group leader). */
export function treePids(rootPid) {
  const table = readProcTable();
  const found = new Set();
  for (const [pid, p] of table) {
    if (pid === rootPid || p.pgid === rootPid || p.sid === rootPid) found.add(pid);
  }
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of table) {
      if (!found.has(pid) && found.has(p.ppid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return [...found].filter((pid) => table.get(pid)?.state !== 'Z');
}

function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Sends `signal` to the process group `rootPid` and to every process of its tree. */
export function signalTree(rootPid, signal) {
  const pids = treePids(rootPid);
  try {
    process.kill(-rootPid, signal);
  } catch {
    // the group may be gone already
  }
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  return pids;
}

/**
 * SIGKILLs the whole tree of `rootPid` (repeatedly, to catch processes forked meanwhile) and
 * resolves once none of them is alive, or after `timeoutMs` (resolves false then).
 */
export async function killTreeAndWait(rootPid, timeoutMs = 5000) {
  const seen = new Set();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const pid of signalTree(rootPid, 'SIGKILL')) seen.add(pid);
    for (const pid of seen) {
      if (alive(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    if (![...seen].some(alive) && treePids(rootPid).length === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
