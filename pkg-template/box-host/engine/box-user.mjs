// The host user a bubblewrap Box's commands run as. bwrap maps the Box's uid 1000 to the uid it
// runs as; on a host running as root that is uid 0, so every root-owned file of the read-only
// system directories (/etc/shadow, ssh host keys, 0600 sysctls) is the Box user's own, and the
// kernel's checks for uid 0 hold for it. There, each Box gets an unprivileged host uid of its own
// (= its gid; random in BOX_UID_RANGE, a range no distribution allocates), bwrap runs as that uid
// (an unprivileged user namespace: isolation.mjs probes that it works), and the host makes it
// the owner of what it creates in the Box (its directories, written and restored files).
// Elsewhere (not root, or no unprivileged user namespaces) the Box runs as the host's own uid,
// as before; `startBoxHost(...).boxUsers` tells which.
//
// The owner of a Box's root directory is its user: what the host creates in the Box is given to
// that owner (ownCreated), so no Box user needs to be passed around.
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Host uids (and gids) of Box users: 0x70000000 up to before systemd's foreign range (0x7FFE0000). */
export const BOX_UID_RANGE = { first: 0x70000000, count: 0x0ffe0000 };

/** Whether `uid` is one of BOX_UID_RANGE (a Box user's, of this host process or another). */
export function isBoxUid(uid) {
  return uid >= BOX_UID_RANGE.first && uid < BOX_UID_RANGE.first + BOX_UID_RANGE.count;
}

/** The uids of this process's Boxes that still hold one. */
const held = new Set();

/** A host uid for a new Box, held by no other Box of this process (release it once the Box is gone). */
export function acquireBoxUid() {
  for (;;) {
    const uid = BOX_UID_RANGE.first + randomInt(BOX_UID_RANGE.count);
    if (!held.has(uid)) {
      held.add(uid);
      return uid;
    }
  }
}

/** Gives back a uid of acquireBoxUid (its Box's processes and directory are gone). */
export function releaseBoxUid(uid) {
  held.delete(uid);
}

/**
 * The Box user as the owner of the Box directory `root` (`{ uid, gid }`), or null when it is the
 * host's own user (nothing to give away).
 */
export function boxOwner(root) {
  const { uid, gid } = fs.statSync(root);
  return uid === process.geteuid?.() ? null : { uid, gid };
}

/**
 * Gives what the host just created in a Box (an open fd, of a file or directory) to the Box's
 * user `owner` (boxOwner). A file the host does not own, or with other links, is left as it is:
 * only what the host created is given away, never a host file linked into the Box.
 */
export function ownCreated(fd, owner) {
  if (owner === null) return;
  const st = fs.fstatSync(fd);
  if (st.uid !== process.geteuid?.() || (!st.isDirectory() && st.nlink !== 1)) return;
  fs.fchownSync(fd, owner.uid, owner.gid);
}

/**
 * Makes the Box root `dir` (a real path) reachable by the Box users, which open their Box's
 * directories below it: every ancestor must let others search it. `dir` itself gets that bit
 * (search only, not listing) when it lacks it only if the host owns it and it holds nothing but
 * Box directories (a fresh `mkdtemp` one): opening a private directory that holds other files
 * would expose those to every user of the machine (found by the security review).
 * @throws {Error} naming the directory that others cannot search.
 */
export function reachableByBoxUsers(dir) {
  const st = fs.statSync(dir);
  if ((st.mode & 0o001) === 0) {
    const onlyBoxes = fs.readdirSync(dir).every((name) => name.startsWith('vite-hub-box-'));
    if (st.uid !== process.geteuid?.() || !onlyBoxes) {
      throw new Error(
        `the Box root ${dir} is not searchable by other users, whom Box commands run as on a root host, and holds other files: give it o+x, or set TMPDIR (the default Box root) or boxRoot to a directory every user can reach, such as /tmp`,
      );
    }
    fs.chmodSync(dir, (st.mode & 0o7777) | 0o001);
  }
  for (let parent = path.dirname(dir); ; parent = path.dirname(parent)) {
    if ((fs.statSync(parent).mode & 0o001) === 0) {
      throw new Error(
        `the Box root ${dir} is below ${parent}, which other users cannot search, and Box commands run as an unprivileged uid on a root host: set TMPDIR (the default Box root) or boxRoot to a directory every user can reach, such as /tmp`,
      );
    }
    if (parent === path.dirname(parent)) return;
  }
}
