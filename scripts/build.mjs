// Builds the npm package `@vite-hub/sandbox` into dist/: the wasm (wasm-pack, target web, so one
// module serves Node, workerd and browsers) plus pkg-template/. Then links it at
// node_modules/@vite-hub/sandbox so tests and examples import it by its public name.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, existsSync, lstatSync, readdirSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const wasmOut = join(root, 'target', 'wasm-pkg');

execFileSync('wasm-pack', ['build', '--release', '--target', 'web', '--no-pack', '--out-dir', wasmOut, '--out-name', 'vite_hub_sandbox'], {
  cwd: root,
  stdio: 'inherit',
});

// Size: binaryen's wasm-opt from npm (pinned in package.json), not wasm-pack's (off in Cargo.toml:
// the Debian build broke the reference-types table). The features are those rustc enables by
// default for wasm32-unknown-unknown; the optimizer must not introduce others.
const wasmFile = join(wasmOut, 'vite_hub_sandbox_bg.wasm');
const WASM_FEATURES = ['reference-types', 'bulk-memory', 'nontrapping-float-to-int', 'sign-ext', 'mutable-globals', 'multivalue'];
execFileSync(process.execPath, [join(root, 'node_modules', 'binaryen', 'bin', 'wasm-opt'), '-Oz', ...WASM_FEATURES.map((f) => `--enable-${f}`), wasmFile, '-o', wasmFile], {
  cwd: root,
  stdio: 'inherit',
});

rmSync(dist, { recursive: true, force: true });
cpSync(join(root, 'pkg-template'), dist, { recursive: true });
mkdirSync(join(dist, 'wasm'), { recursive: true });
for (const file of readdirSync(wasmOut)) {
  if (/^vite_hub_sandbox(_bg)?\.(js|wasm|d\.ts)$|^vite_hub_sandbox_bg\.wasm\.d\.ts$/.test(file)) {
    copyFileSync(join(wasmOut, file), join(dist, 'wasm', file));
  }
}

const link = join(root, 'node_modules', '@vite-hub', 'sandbox');
mkdirSync(dirname(link), { recursive: true });
if (existsSync(link) || isDanglingLink(link)) rmSync(link, { recursive: true, force: true });
symlinkSync('../../dist', link, 'dir');
console.log(`built ${dist} and linked it at node_modules/@vite-hub/sandbox`);

function isDanglingLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
