// In-Box script (CommonJS; embedded by build.rs after fingerprint.cjs, whose `fingerprint(root)`
// it uses; crates/core/src/run/install.rs KEPT_SCRIPT): the install step of a Run in a kept Box.
// `node -e <this> <dir> <expected fingerprint|-> <install argv…>`, cwd the Run's project directory.
// `<dir>` is the prepared project of one install digest: `tree/` (the installed trees) and
// `record.json` (written last: the tree is complete; its time orders the digests by use). The
// expected fingerprint is the one the isolate recorded when it kept `<dir>` (Runs can write
// `<dir>`, never the isolate's memory); `-` when it has none.
// - `<dir>` there and a fingerprint expected: its tree is copied into the cwd (reflinks where the
//   file system has them), the copy (the Run's own, which no other Run can touch) is fingerprinted
//   and, when equal, `vitehub-prepared:restored` printed.
// - else (missing, not known to the isolate, or damaged: the partial copy is undone and `<dir>`
//   removed): the install argv runs (its failure is this script's exit code), then the cwd's
//   installed trees (every `node_modules`, Yarn's `.yarn/` and `.pnp.*`) are copied to
//   `<dir>.tmp-<pid>`, fingerprinted, the record written last and the copy renamed to `<dir>`;
//   only the KEPT_PER_BOX most recently used digests stay. Prints `vitehub-prepared:installed`
//   (`reinstalled` when a damaged one was replaced), after a `vitehub-prepared:not-kept <reason>`
//   line when the tree could not be kept, and last `vitehub-fingerprint:<sha256 hex>` of the kept
//   tree (`vitehub-fingerprint:none` when this Run's tree is not the one at `<dir>`).
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const KEPT_PER_BOX = 4;
const [dir, expected, command, ...args] = process.argv.slice(1);
const say = (word) => console.log('vitehub-prepared:' + word);

// Copies the tree `from` into `to` without replacing anything `to` has; each path it makes at
// the top is pushed to `made` (to undo).
function copyTree(from, to, made) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      if (fs.existsSync(target)) {
        copyTree(source, target, made);
      } else {
        fs.mkdirSync(target, { mode: fs.lstatSync(source).mode & 4095 });
        made.push(target);
        copyTree(source, target, []);
      }
      continue;
    }
    if (entry.isSymbolicLink()) {
      if (!fs.existsSync(target)) {
        fs.symlinkSync(fs.readlinkSync(source), target);
        made.push(target);
      }
      continue;
    }
    if (!fs.existsSync(target)) {
      fs.copyFileSync(source, target, fs.constants.COPYFILE_FICLONE);
      made.push(target);
      if (fs.lstatSync(target).size !== fs.lstatSync(source).size) throw Error('short copy');
    }
  }
}

// Mirrors the installed trees below `from` into `to` (directories on the way are made, other
// files skipped).
function keepInstalled(from, to) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    const installed =
      entry.name === 'node_modules' || (from === '.' && (entry.name === '.yarn' || entry.name.startsWith('.pnp.')));
    if (entry.isDirectory()) {
      fs.mkdirSync(target, { recursive: true });
      if (installed) copyTree(source, target, []);
      else keepInstalled(source, target);
    } else if (installed) {
      if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), target);
      else fs.copyFileSync(source, target, fs.constants.COPYFILE_FICLONE);
    }
  }
}

// Removes a directory: renamed aside first, so a half-removed one is never taken for intact.
function drop(directory) {
  try {
    const gone = directory + '.gone-' + process.pid;
    fs.renameSync(directory, gone);
    fs.rmSync(gone, { recursive: true, force: true });
  } catch {}
}

const had = fs.existsSync(dir);
try {
  if (expected === '-') throw Error('not known');
  fs.accessSync(path.join(dir, 'record.json'));
  const made = [];
  try {
    copyTree(path.join(dir, 'tree'), '.', made);
    if (fingerprint('.') !== expected) throw Error('changed');
  } catch (error) {
    for (const madePath of made.reverse()) fs.rmSync(madePath, { recursive: true, force: true });
    throw error;
  }
  const now = new Date();
  fs.utimesSync(path.join(dir, 'record.json'), now, now);
  say('restored');
  process.exit(0);
} catch {
  drop(dir);
}

const install = spawnSync(command, args, { stdio: 'inherit' });
if (install.error) {
  console.error(command + ': ' + install.error.message);
  process.exit(127);
}
if (install.status !== 0) process.exit(install.status ?? 128 + (require('os').constants.signals[install.signal] || 0));

let kept = 'none';
try {
  const staging = dir + '.tmp-' + process.pid;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(path.join(staging, 'tree'), { recursive: true });
  keepInstalled('.', path.join(staging, 'tree'));
  const print = fingerprint(path.join(staging, 'tree'));
  fs.writeFileSync(path.join(staging, 'record.json'), '{}');
  try {
    fs.renameSync(staging, dir);
    kept = print;
  } catch {
    drop(staging);
  }
  const root = path.dirname(dir);
  const recordTime = (name) =>
    fs.statSync(path.join(root, name, 'record.json'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const digests = fs
    .readdirSync(root)
    .filter((name) => /^[0-9a-f]{64}$/.test(name))
    .map((name) => [name, recordTime(name)])
    .sort((a, b) => b[1] - a[1]);
  for (const [name] of digests.slice(KEPT_PER_BOX)) drop(path.join(root, name));
} catch (error) {
  say(
    'not-kept ' +
      String(error && error.message)
        .replace(/\s+/g, ' ')
        .slice(0, 300),
  );
}
say(had && expected !== '-' ? 'reinstalled' : 'installed');
console.log('vitehub-fingerprint:' + kept);
