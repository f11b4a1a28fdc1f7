// The runtime wasm module in Node: instantiated synchronously from disk when this file is first
// imported. The Node entry (index.node.mjs) and the build step that validates Definitions
// (vite/generate.mjs) share this one instance. workerd and browsers load it in their entries.
import { readFileSync } from 'node:fs';
import * as wasm from '../wasm/vite_hub_sandbox.js';

wasm.initSync({ module: readFileSync(new URL('../wasm/vite_hub_sandbox_bg.wasm', import.meta.url)) });

export { wasm };
