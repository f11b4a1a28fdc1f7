// In-Box script (CommonJS, run as `node -e <this>` with the project as cwd; embedded by build.rs,
// src/run/install.rs FINGERPRINT_SCRIPT). Prints `vitehub-fingerprint:<sha256 hex>` of every file
// and symlink inside the `node_modules` trees below the cwd: in path order, each path, its `lstat`
// mode and its content (a symlink: its target).
const fs = require('fs');
const path = require('path');
const hash = require('crypto').createHash('sha256');

function walk(dir, insideModules) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    const counted = insideModules || entry.name === 'node_modules';
    if (entry.isDirectory()) {
      walk(file, counted);
      continue;
    }
    if (!counted) continue;
    hash.update(file + '\0' + fs.lstatSync(file).mode + '\0');
    hash.update(entry.isSymbolicLink() ? fs.readlinkSync(file) : entry.isFile() ? fs.readFileSync(file) : '');
    hash.update('\0');
  }
}

walk('.', false);
console.log('vitehub-fingerprint:' + hash.digest('hex'));
