// Process trees on Linux, read from /proc: find every process of a command (its process group,
// its session and all descendants), signal them, and wait until they are gone. Where there is no
// /proc (macOS), a command's tree is its process group (each command is spawned `detached`, the
// leader of a group of its own: Node's child_process docs), signalled as a whole.
import fs from 'node:fs';

const HAS_PROC = fs.existsSync('/proc/self/stat');

/** Whether any process of group `pgid` is alive (macOS path). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

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

/**
 * Live (non-zombie) pids of the tree rooted at `rootPid` (a process group leader): its group, its
 * session and their descendants. Once the leader is reaped (`leaderGone`), its pid may be reused,
 * so only members still carrying its group or session id are matched.
 */
export function treePids(rootPid, leaderGone = false) {
  if (!HAS_PROC) return groupAlive(rootPid) ? [-rootPid] : [];
  const table = readProcTable();
  const found = new Set();
  for (const [pid, p] of table) {
    if ((!leaderGone && pid === rootPid) || p.pgid === rootPid || p.sid === rootPid) found.add(pid);
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
  if (pid < 0) return groupAlive(-pid);
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Sends `signal` to every process of the tree of `rootPid` (see treePids). */
export function signalTree(rootPid, signal, leaderGone = false) {
  const pids = treePids(rootPid, leaderGone);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  return pids;
}

/** Most rounds of SIGSTOP spent finding a tree that keeps forking (each round stops what is new). */
const MAX_FREEZE_ROUNDS = 50;

/**
 * SIGKILLs the whole tree of `rootPid` and resolves once none of them is alive, or after
 * `timeoutMs` (resolves false then).
 *
 * The tree is frozen first: every process found is SIGSTOPped and the table read again until no
 * new one appears. A stopped process cannot fork, and a child forked just before keeps its
 * stopped parent, so it is found in the next round. Killing first would let a child forked
 * between the table read and the parent's death be reparented to pid 1, out of reach (a detached
 * child escaped that way about 1 run in 10 under load).
 */
export async function killTreeAndWait(rootPid, leaderGone = () => false, timeoutMs = 5000) {
  const seen = new Set();
  for (let round = 0; round < MAX_FREEZE_ROUNDS; round += 1) {
    const fresh = treePids(rootPid, leaderGone()).filter((pid) => !seen.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      seen.add(pid);
      try {
        process.kill(pid, 'SIGSTOP');
      } catch {
        // already gone
      }
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const pid of seen) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const pid of signalTree(rootPid, 'SIGKILL', leaderGone())) seen.add(pid);
    if (![...seen].some(alive) && treePids(rootPid, leaderGone()).length === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
