// Builds the npm package `@vite-hub/sandbox` into dist/: two wasm modules, one crate each
// (wasm-pack, target web, so each serves Node, workerd and browsers) plus pkg-template/ and the
// local Box's seccomp filter (crates/box-seccomp: one classic-BPF program per architecture and
// answer, in box-host/seccomp/; users get them prebuilt). Then links it at
// node_modules/@vite-hub/sandbox so tests and examples import it by its public name.
//
// - runtime (`vite_hub_sandbox`, the root crate): what every runtime loads to run Definitions;
// - tooling (`vite_hub_sandbox_tooling`, crates/tooling): the build-time rules, loaded only in
//   Node by the build steps.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  rmSync,
  symlinkSync,
  existsSync,
  lstatSync,
  copyFileSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleNodeEntries } from './bundle-node-entries.mjs';
import { writeSharedFacts } from './generate-facts.mjs';
import { isAbsoluteLink, rewriteLinks } from './markdown-links.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** The wasm modules: wasm-pack `--out-name` and the crate directory of each. */
const WASM_MODULES = [
  { name: 'vite_hub_sandbox', crate: '.' },
  { name: 'vite_hub_sandbox_tooling', crate: join('crates', 'tooling') },
];

// Size: binaryen's wasm-opt from npm (pinned in package.json), not wasm-pack's (off in Cargo.toml:
// the Debian build broke the reference-types table). The features are those rustc enables by
// default for wasm32-unknown-unknown; the optimizer must not introduce others.
const WASM_FEATURES = [
  'reference-types',
  'bulk-memory',
  'nontrapping-float-to-int',
  'sign-ext',
  'mutable-globals',
  'multivalue',
];
// Size passes, measured gzipped (-9) on the runtime module: -Os, then binaryen's --flatten and
// --rereloop (its control flow rebuilt from scratch, as -O4 does), then -Os repeated until it stops
// shrinking (--converge). 252,074 B against 253,588 B for `-Oz --converge` (2026-12-02): -Os output
// is a little larger raw but compresses better. Then the producers and target-features custom
// sections, which no runtime reads.
const WASM_OPT_FLAGS = [
  '-Os',
  '--flatten',
  '--rereloop',
  '-Os',
  '-Os',
  '--converge',
  '--strip-producers',
  '--strip-target-features',
];

for (const { name, crate } of WASM_MODULES) {
  // One out-dir per module: wasm-pack empties it first.
  const wasmOut = join(root, 'target', 'wasm-pkg', name);
  execFileSync(
    'wasm-pack',
    ['build', crate, '--release', '--target', 'web', '--no-pack', '--out-dir', wasmOut, '--out-name', name],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  const wasmFile = join(wasmOut, `${name}_bg.wasm`);
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', 'binaryen', 'bin', 'wasm-opt'),
      ...WASM_OPT_FLAGS,
      ...WASM_FEATURES.map((f) => `--enable-${f}`),
      wasmFile,
      '-o',
      wasmFile,
    ],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

rmSync(dist, { recursive: true, force: true });
cpSync(join(root, 'pkg-template'), dist, { recursive: true });
// The Box filter's programs, beside the engine that reads them (box-host/engine/box-seccomp.mjs).
execFileSync(
  'cargo',
  ['run', '--quiet', '--locked', '-p', 'vite-hub-box-seccomp', '--', join(dist, 'box-host', 'seccomp')],
  { cwd: root, stdio: 'inherit' },
);
mkdirSync(join(dist, 'wasm'), { recursive: true });
for (const { name } of WASM_MODULES) {
  const wasmOut = join(root, 'target', 'wasm-pkg', name);
  for (const file of [`${name}.js`, `${name}.d.ts`, `${name}_bg.wasm`, `${name}_bg.wasm.d.ts`]) {
    copyFileSync(join(wasmOut, file), join(dist, 'wasm', file));
  }
}

await writeSharedFacts(dist);
// After the facts: the Node entry inlines runtime/facts.mjs with the other stateless modules.
await bundleNodeEntries(dist);
// The package's README is the repository's (its "Use it in your app" section comes first), with
// its relative links made absolute: the tarball holds no docs/, examples/ or scripts/, so on npm
// they point at the repository on GitHub (tests/package/package.test.mjs). The LICENSE is the one
// package.json names (MIT).
writeFileSync(join(dist, 'README.md'), packageReadme(readFileSync(join(root, 'README.md'), 'utf8')));
copyFileSync(join(root, 'LICENSE'), join(dist, 'LICENSE'));

const link = join(root, 'node_modules', '@vite-hub', 'sandbox');
mkdirSync(dirname(link), { recursive: true });
if (existsSync(link) || isDanglingLink(link)) rmSync(link, { recursive: true, force: true });
symlinkSync('../../dist', link, 'dir');
console.log(`built ${dist} and linked it at node_modules/@vite-hub/sandbox`);

/**
 * The README for npm: each relative link (`docs/configure.md`, `examples/app/`) becomes
 * `<repository>/blob/main/<path>` (`tree/` for a folder), the repository taken from
 * pkg-template/package.json; in-page `#anchors` and absolute links stay.
 */
function packageReadme(text) {
  const { repository } = JSON.parse(readFileSync(join(root, 'pkg-template', 'package.json'), 'utf8'));
  const base = repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  return rewriteLinks(text, (target) => {
    if (isAbsoluteLink(target) || target.startsWith('#')) return target;
    const path = target.split('#')[0];
    const kind = statSync(join(root, decodeURIComponent(path))).isDirectory() ? 'tree' : 'blob';
    return `${base}/${kind}/main/${target.replace(/^\.\//, '')}`;
  });
}

function isDanglingLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
