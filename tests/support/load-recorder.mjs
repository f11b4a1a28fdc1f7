// Preload (`node --import`) for tests/package/runtime-imports.test.mjs: records, one line each in
// the file named by env LOAD_RECORDER_LOG, every module URL this process resolves
// (`module:<url>`, through the resolve hook of load-recorder-hooks.mjs for `import`, and through
// `Module._load` for `require`, so a library loaded by CommonJS is seen too) and the export
// names of every wasm module it compiles (`wasm:<name,name,…>`, however it is compiled).
import { appendFileSync } from 'node:fs';
import Module, { isBuiltin, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const log = process.env.LOAD_RECORDER_LOG;
if (!log) throw new Error('load-recorder.mjs needs env LOAD_RECORDER_LOG');
register('./load-recorder-hooks.mjs', import.meta.url, { data: { log } });

const originalLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  const exports = originalLoad.call(this, request, parent, isMain);
  if (!isBuiltin(request))
    appendFileSync(log, `module:${pathToFileURL(Module._resolveFilename(request, parent, isMain)).href}\n`);
  return exports;
};

const recordModule = (module) => {
  appendFileSync(
    log,
    `wasm:${WebAssembly.Module.exports(module)
      .map((item) => item.name)
      .join(',')}\n`,
  );
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
