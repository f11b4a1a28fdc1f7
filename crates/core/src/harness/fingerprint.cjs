// In-Box function (CommonJS; embedded by build.rs, the one source of the fingerprint rule):
// `fingerprint(root)` is the sha256 hex of every directory, file and symlink inside the installed
// trees below `root` (every `node_modules`, and Yarn's `.yarn/` and `.pnp.*` at `root`), in path
// order. Each entry is one line of the outer hash: its kind, `lstat` mode, size, the sha256 of its
// content (a symlink: its target; a directory: none) and its path relative to `root` as a JSON
// string. A line says where each field ends, so no two different trees give the same lines (moving
// bytes from one file's end to the next file, or a file into a directory name, changes them).
// Used by crates/core/src/run/install.rs KEPT_SCRIPT (kept-prepared.cjs).
function fingerprint(root) {
  const fs = require('fs');
  const path = require('path');
  const crypto = require('crypto');
  const hash = crypto.createHash('sha256');
  const entryLine = (name, stat, content) => {
    const kind = stat.isDirectory() ? 'd' : stat.isSymbolicLink() ? 'l' : stat.isFile() ? 'f' : 'o';
    const digest = content === null ? '-' : crypto.createHash('sha256').update(content).digest('hex');
    const size = content === null ? '-' : String(Buffer.byteLength(content));
    return kind + ' ' + stat.mode.toString(8) + ' ' + size + ' ' + digest + ' ' + JSON.stringify(name) + '\n';
  };
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
      const counted =
        insideModules ||
        entry.name === 'node_modules' ||
        (!relative && (entry.name === '.yarn' || entry.name.startsWith('.pnp.')));
      if (counted) {
        const stat = fs.lstatSync(file);
        const content = entry.isDirectory()
          ? null
          : entry.isSymbolicLink()
            ? fs.readlinkSync(file)
            : entry.isFile()
              ? fs.readFileSync(file)
              : '';
        hash.update(entryLine(name, stat, content));
      }
      if (entry.isDirectory()) walk(file, name, counted);
    }
  };
  walk(root, '', false);
  return hash.digest('hex');
}
