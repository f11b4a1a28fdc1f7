// Removing a directory tree a Box wrote (its root, a stale one of an ended host): the Box chose
// its modes, and a directory it made unreadable or unwritable for its owner (`chmod 0`) makes
// `rm -r` fail with EACCES for a host that is not root, so the tree would stay on disk for good.
// The removal gives every directory of the tree its owner's rwx back (walking with lstat: a
// symlink is never followed, and every process of the Box has ended by then) and removes again.
import fs from 'node:fs';
import path from 'node:path';

const RM_OPTIONS = { recursive: true, force: true, maxRetries: 3 };

/** Whether `err` is a refusal that the directories' modes explain. */
const refusedByModes = (err) => err?.code === 'EACCES' || err?.code === 'EPERM';

/** Gives each directory below `dir` (itself included) its owner's rwx back; never throws. */
function openUp(dir) {
  let st;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return;
  }
  if (!st.isDirectory()) return;
  if ((st.mode & 0o700) !== 0o700) {
    try {
      fs.chmodSync(dir, (st.mode & 0o7777) | 0o700);
    } catch {
      // not the owner's: the removal below says what is left
    }
  }
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) openUp(path.join(dir, name));
}

/** Removes the tree at `dir` (gone already: done); rejects with what is still refused. */
export async function removeBoxTree(dir) {
  try {
    await fs.promises.rm(dir, RM_OPTIONS);
    return;
  } catch (err) {
    if (!refusedByModes(err)) throw err;
  }
  openUp(dir);
  await fs.promises.rm(dir, RM_OPTIONS);
}

/** removeBoxTree, synchronously (a process `exit` listener); throws what is still refused. */
export function removeBoxTreeNow(dir) {
  try {
    fs.rmSync(dir, RM_OPTIONS);
    return;
  } catch (err) {
    if (!refusedByModes(err)) throw err;
  }
  openUp(dir);
  fs.rmSync(dir, RM_OPTIONS);
}
