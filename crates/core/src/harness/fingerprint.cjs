// In-Box function (CommonJS; embedded by build.rs, the one source of the fingerprint rule):
// `fingerprint(root)` is the sha256 hex of every file and symlink inside the installed trees below
// `root` (every `node_modules`, and Yarn's `.yarn/` and `.pnp.*` at `root`): in path order, each
// path relative to `root`, its `lstat` mode and its content (a symlink: its target). Used by
// crates/core/src/run/install.rs FINGERPRINT_SCRIPT (prints it for the cwd) and KEPT_SCRIPT (kept-prepared.cjs).
function fingerprint(root) {
  const fs = require('fs');
  const path = require('path');
  const hash = require('crypto').createHash('sha256');
  const walk = (dir, relative, insideModules) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      const name = relative ? relative + '/' + entry.name : entry.name;
      const counted = insideModules || entry.name === 'node_modules' || (!relative && (entry.name === '.yarn' || entry.name.startsWith('.pnp.')));
      if (entry.isDirectory()) {
        walk(file, name, counted);
        continue;
      }
      if (!counted) continue;
      hash.update(name + '\0' + fs.lstatSync(file).mode + '\0');
      hash.update(entry.isSymbolicLink() ? fs.readlinkSync(file) : entry.isFile() ? fs.readFileSync(file) : '');
      hash.update('\0');
    }
  };
  walk(root, '', false);
  return hash.digest('hex');
}
