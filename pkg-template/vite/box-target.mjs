// What Vite 7's esbuild compiles a Definition's code for (app-vite.mjs, free-form.mjs): the Box's
// Node, 20 or later (the package's `engines`). Import attributes (`import data from './data.json'
// with { type: 'json' }`; Node 18.20 and 20.10 on) are kept: esbuild's table counts them
// unsupported by `node20` and drops them without a word, and Node then refuses the JSON import
// ("needs an import attribute of type json").
export const BOX_NODE_TARGET = Object.freeze({
  target: 'node20',
  supported: Object.freeze({ 'import-attributes': true }),
});
