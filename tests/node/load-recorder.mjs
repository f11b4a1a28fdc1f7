// Preload (`node --import`) for tests/node/runtime-imports.test.mjs: records, one line each in
// the file named by env LOAD_RECORDER_LOG, every module URL this process resolves
// (`module:<url>`, through the resolve hook of load-recorder-hooks.mjs) and the export names of
// every wasm module it compiles (`wasm:<name,name,…>`, however it is compiled).
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

const log = process.env.LOAD_RECORDER_LOG;
if (!log) throw new Error('load-recorder.mjs needs env LOAD_RECORDER_LOG');
register('./load-recorder-hooks.mjs', import.meta.url, { data: { log } });

const recordModule = (module) => {
  appendFileSync(log, `wasm:${WebAssembly.Module.exports(module).map((item) => item.name).join(',')}\n`);
  return module;
};
const OriginalModule = WebAssembly.Module;
WebAssembly.Module = new Proxy(OriginalModule, {
  construct: (target, args, newTarget) => recordModule(Reflect.construct(target, args, newTarget)),
});
for (const name of ['compile', 'compileStreaming']) {
  const original = WebAssembly[name];
  WebAssembly[name] = async (...args) => recordModule(await original.apply(WebAssembly, args));
}
for (const name of ['instantiate', 'instantiateStreaming']) {
  const original = WebAssembly[name];
  WebAssembly[name] = async (...args) => {
    const result = await original.apply(WebAssembly, args);
    // instantiate(bytes) answers { module, instance }; instantiate(module) the instance.
    recordModule(result.module ?? args[0]);
    return result;
  };
}
