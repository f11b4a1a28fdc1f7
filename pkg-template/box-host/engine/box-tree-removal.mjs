// Removing a directory tree a Box wrote (its root, a stale one of an ended host): the Box chose
// its shape and modes. Two shapes make Node's `fs.rm` fail for good on a host that is not root: a
// directory whose owner's rwx the Box took away (`chmod 0`: EACCES), and a tree nested deeper than
// PATH_MAX (ENAMETOOLONG: Node removes by full path). Then the system's own tools take over, which
// walk a tree relative to each directory (fts with openat): `chmod -R u+rwx` gives the owner its
// rights back (symlinks met on the way are neither followed nor changed), then `rm -rf` removes
// the tree. Every process of the Box has ended by then.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { SYSTEM_PATH } from './box-toolchain.mjs';

const RM_OPTIONS = { recursive: true, force: true, maxRetries: 3 };
/** The tools' environment and bound (ms): a large tree takes a while, a hung disk does not hang the host. */
const TOOL_OPTIONS = { env: { PATH: SYSTEM_PATH }, timeout: 120_000, maxBuffer: 1024 * 1024 };
const run = promisify(execFile);

/** Whether `err` is a refusal the tree's modes or depth explain (the system's tools can do better). */
const needsTools = (err) => ['EACCES', 'EPERM', 'ENAMETOOLONG', 'ELOOP'].includes(err?.code);

/** The error of a tool that failed, naming it and what it printed. */
const toolError = (err, dir) =>
  new Error(`the Box's files at ${dir} could not be removed: ${String(err.stderr ?? '').trim() || err.message}`, {
    cause: err,
  });

/** Removes the tree at `dir` (gone already: done); rejects with what still refused. */
export async function removeBoxTree(dir) {
  try {
    await fs.promises.rm(dir, RM_OPTIONS);
    return;
  } catch (err) {
    if (!needsTools(err)) throw err;
  }
  // Best effort: what it could not change, rm says below.
  await run('chmod', ['-R', 'u+rwx', '--', dir], TOOL_OPTIONS).catch(() => {});
  await run('rm', ['-rf', '--', dir], TOOL_OPTIONS).catch((err) => {
    throw toolError(err, dir);
  });
}

/** removeBoxTree, synchronously (a process `exit` listener); throws what still refused. */
export function removeBoxTreeNow(dir) {
  try {
    fs.rmSync(dir, RM_OPTIONS);
    return;
  } catch (err) {
    if (!needsTools(err)) throw err;
  }
  try {
    execFileSync('chmod', ['-R', 'u+rwx', '--', dir], { ...TOOL_OPTIONS, stdio: 'ignore' });
  } catch {
    // best effort, as above
  }
  try {
    execFileSync('rm', ['-rf', '--', dir], { ...TOOL_OPTIONS, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    throw toolError(err, dir);
  }
}
