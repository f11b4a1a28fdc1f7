// What the bench sees of the processes its in-process Box hosts started (scripts/bench.mjs): the
// descendants of this process, read from /proc (Linux). Used to let the hosts settle between two
// samples (a Run's Box is stopped after its Response, a parked process or a pooled Box is made
// ready after a Run: work that would otherwise fall into the next sample's clock, whichever side
// it belongs to).
import fs from 'node:fs';

/** Whether this system shows its processes in /proc (else nothing here can be seen). */
export const procVisible = fs.existsSync('/proc/self/stat');

/** `{ pid, ppid, comm, ticks }` of every process in /proc (ticks: user + system CPU time). */
function processTable() {
  const table = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    table.push({
      pid: Number(entry),
      comm: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
    });
  }
  return table;
}

/** The live descendants of this process (children, their children, …). */
export const ownDescendants = () => descendantsOf(process.pid);

/** The live descendants of process `root` (children, their children, …). */
export function descendantsOf(root) {
  const table = processTable();
  const found = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const proc of table) {
      if (!found.has(proc.pid) && found.has(proc.ppid)) {
        found.add(proc.pid);
        grew = true;
      }
    }
  }
  return table.filter((proc) => proc.pid !== root && found.has(proc.pid));
}

/** One line for the output: what `settle` waits for. */
export const SETTLE_RULE = procVisible
  ? 'after every sample the bench waits, untimed, until its hosts answered no request and the processes it started used no CPU for 90 ms'
  : 'after every sample the bench waits, untimed, until its hosts answered no request for 90 ms (no /proc here: the CPU use of Box processes is not seen)';
const POLL_MS = 30;
const QUIET_POLLS = 3;
const MAX_SETTLE_MS = 10_000;

/**
 * Resolves once every host in `hosts` (their `counters()`) counted no new request and the
 * descendants of this process used no CPU over QUIET_POLLS polls; throws after MAX_SETTLE_MS
 * (something kept working: a figure taken then would not be honest).
 */
export async function settle(hosts) {
  const reading = () => {
    const requests = hosts.reduce((sum, host) => sum + host.counters().total, 0);
    const ticks = procVisible ? ownDescendants().reduce((sum, proc) => sum + proc.ticks, 0) : 0;
    return `${requests}/${ticks}`;
  };
  const started = performance.now();
  let last = reading();
  let quiet = 0;
  while (quiet < QUIET_POLLS) {
    if (performance.now() - started > MAX_SETTLE_MS)
      throw new Error(`the Box hosts did not settle within ${MAX_SETTLE_MS} ms (requests or CPU use went on)`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const now = reading();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}
