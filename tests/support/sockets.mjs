// What a process listens on, read from Linux /proc (for tests that count Box hosts).
import { readdirSync, readlinkSync, readFileSync } from 'node:fs';

/**
 * TCP sockets in LISTEN state that process `pid` holds (default: this one). A Box host's server is
 * unref'd, so listening sockets, not handles, show whether one was started.
 */
export function listeningSockets(pid = 'self') {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {}
  }
  let count = 0;
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && inodes.has(fields[9])) count += 1;
    }
  }
  return count;
}
