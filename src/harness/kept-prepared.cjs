// In-Box script (CommonJS; embedded by build.rs, src/run/install.rs KEPT_SCRIPT): the install step
// of a Run in a kept Box. `node -e <this> <dir> <install argv…>`, cwd the Run's project directory.
// `<dir>` is the prepared project of one install digest: `tree/` (the installed trees) and
// `record.json` (`{ files, bytes }`: regular files and symlinks, bytes of the files).
// - `<dir>` there and intact: its tree is copied into the cwd (reflinks where the file system has
//   them), checked against the record, and `vitehub-prepared:restored` printed.
// - else (missing, or damaged: the partial copy is undone and `<dir>` removed): the install argv
//   runs (its failure is this script's exit code), then the cwd's installed trees (every
//   `node_modules`, Yarn's `.yarn/` and `.pnp.*`) are copied to `<dir>.tmp-<pid>`, the record
//   written last and the copy renamed to `<dir>` (a concurrent writer's rename wins); only the
//   KEPT_PER_BOX most recently used digests stay. Prints `vitehub-prepared:installed`
//   (`reinstalled` when a damaged one was replaced), after a `vitehub-prepared:not-kept <reason>`
//   line when the tree could not be kept.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const KEPT_PER_BOX = 4;
const [dir, command, ...args] = process.argv.slice(1);
const say = (word) => console.log('vitehub-prepared:' + word);

// Copies the tree `from` into `to` without replacing anything `to` has; each path it makes at
// the top is pushed to `made` (to undo), files and bytes are counted in `totals`.
function copyTree(from, to, made, totals) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      if (fs.existsSync(target)) {
        copyTree(source, target, made, totals);
      } else {
        fs.mkdirSync(target, { mode: fs.lstatSync(source).mode & 4095 });
        made.push(target);
        copyTree(source, target, [], totals);
      }
      continue;
    }
    totals.files++;
    if (entry.isSymbolicLink()) {
      if (!fs.existsSync(target)) {
        fs.symlinkSync(fs.readlinkSync(source), target);
        made.push(target);
      }
      continue;
    }
    totals.bytes += fs.lstatSync(source).size;
    if (!fs.existsSync(target)) {
      fs.copyFileSync(source, target, fs.constants.COPYFILE_FICLONE);
      made.push(target);
      if (fs.lstatSync(target).size !== fs.lstatSync(source).size) throw Error('short copy');
    }
  }
}

// Mirrors the installed trees below `from` into `to` (directories on the way are made, other
// files skipped), counting files and bytes in `totals`.
function keepInstalled(from, to, totals) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    const installed = entry.name === 'node_modules' || (from === '.' && (entry.name === '.yarn' || entry.name.startsWith('.pnp.')));
    if (entry.isDirectory()) {
      fs.mkdirSync(target, { recursive: true });
      if (installed) copyTree(source, target, [], totals);
      else keepInstalled(source, target, totals);
    } else if (installed) {
      totals.files++;
      if (entry.isSymbolicLink()) {
        fs.symlinkSync(fs.readlinkSync(source), target);
      } else {
        totals.bytes += fs.lstatSync(source).size;
        fs.copyFileSync(source, target, fs.constants.COPYFILE_FICLONE);
      }
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
  const record = JSON.parse(fs.readFileSync(path.join(dir, 'record.json'), 'utf8'));
  const totals = { files: 0, bytes: 0 };
  const made = [];
  try {
    copyTree(path.join(dir, 'tree'), '.', made, totals);
    if (totals.files !== record.files || totals.bytes !== record.bytes) throw Error('changed');
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

try {
  const staging = dir + '.tmp-' + process.pid;
  const totals = { files: 0, bytes: 0 };
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(path.join(staging, 'tree'), { recursive: true });
  keepInstalled('.', path.join(staging, 'tree'), totals);
  fs.writeFileSync(path.join(staging, 'record.json'), JSON.stringify(totals));
  try {
    fs.renameSync(staging, dir);
  } catch {
    drop(staging);
  }
  const root = path.dirname(dir);
  const recordTime = (name) => fs.statSync(path.join(root, name, 'record.json'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const kept = fs.readdirSync(root).filter((name) => /^[0-9a-f]{64}$/.test(name)).map((name) => [name, recordTime(name)]).sort((a, b) => b[1] - a[1]);
  for (const [name] of kept.slice(KEPT_PER_BOX)) drop(path.join(root, name));
  say(had ? 'reinstalled' : 'installed');
} catch (error) {
  say('not-kept ' + String(error && error.message).replace(/\s+/g, ' ').slice(0, 300));
  say(had ? 'reinstalled' : 'installed');
}
