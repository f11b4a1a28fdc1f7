// A linked install (issue 32, item 8c): a folder Definition whose package.json declares a
// dependency as a local path outside its folder (`file:../lib`, `link:`, a bare `../lib`) cannot
// be installed in the Box, which gets the Definition's shipped files only, and a built `.output/`
// cannot carry a link into the app's folders. It is refused when the Definition is read (what
// `vite build`, `vite dev` and `vite-hub-sandbox inspect` do), naming the dependency, its spec and
// the fix, instead of a Run failing in the Box with "Cannot find package". A package copied into
// the Definition's folder and linked from there ships and passes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readDefinitionDirectory } from '@vite-hub/sandbox';

const temporary = [];
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

function makeTree(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-linked-'));
  temporary.push(root);
  for (const [relative, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  }
  return root;
}

const LIB = {
  'lib/package.json': '{"name":"linked-lib","version":"1.0.0","type":"module","main":"index.mjs"}',
  'lib/index.mjs': 'export const shout = (s) => String(s).toUpperCase();\n',
};

test('a dependency linked to a folder outside the Definition is refused, naming it and the fix', async () => {
  const root = makeTree({
    ...LIB,
    'server/sandboxes/linked/package.json':
      '{"name":"linked","type":"module","dependencies":{"linked-lib":"file:../../../lib"}}',
    'server/sandboxes/linked/index.mjs': "import { shout } from 'linked-lib';\nexport default (p) => shout(p);\n",
  });
  // npm's install in the app made the link this Definition relies on; it is not shipped.
  fs.mkdirSync(path.join(root, 'server/sandboxes/linked/node_modules'));
  fs.symlinkSync('../../../../lib', path.join(root, 'server/sandboxes/linked/node_modules/linked-lib'));
  await assert.rejects(
    readDefinitionDirectory(path.join(root, 'server/sandboxes/linked'), { appRoot: root }),
    (error) => {
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', error.stack);
      assert.equal(
        error.message,
        'Sandbox "linked": package.json declares "linked-lib" in "dependencies" as "file:../../../lib", a path outside the Definition\'s folder (R0033): the Box installs from the Definition\'s shipped files only, so the linked package would be missing there, and a built .output/ cannot carry a link to the app\'s folders. Copy the package into the Definition\'s folder and declare it as "file:./<folder>", or install it from a registry.',
      );
      return true;
    },
  );
});

test('a link: or bare ../ path out of the folder is refused the same way', async () => {
  for (const spec of ['link:../../../lib', '../../../lib']) {
    const root = makeTree({
      ...LIB,
      'server/sandboxes/linked/package.json': JSON.stringify({
        name: 'linked',
        type: 'module',
        dependencies: { 'linked-lib': spec },
      }),
      'server/sandboxes/linked/index.mjs': 'export default () => 1;\n',
    });
    await assert.rejects(
      readDefinitionDirectory(path.join(root, 'server/sandboxes/linked'), { appRoot: root }),
      (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', error.stack);
        assert.ok(
          error.message.startsWith(
            `Sandbox "linked": package.json declares "linked-lib" in "dependencies" as ${JSON.stringify(spec)}, a path outside`,
          ),
          error.message,
        );
        return true;
      },
    );
  }
});

test('a package copied into the Definition and linked from there ships and passes', async () => {
  const root = makeTree({
    'server/sandboxes/linked/package.json':
      '{"name":"linked","type":"module","dependencies":{"linked-lib":"file:./vendor/lib"}}',
    'server/sandboxes/linked/index.mjs': "import { shout } from 'linked-lib';\nexport default (p) => shout(p);\n",
    'server/sandboxes/linked/vendor/lib/package.json': LIB['lib/package.json'],
    'server/sandboxes/linked/vendor/lib/index.mjs': LIB['lib/index.mjs'],
  });
  const read = await readDefinitionDirectory(path.join(root, 'server/sandboxes/linked'), { appRoot: root });
  assert.deepEqual(read.files.map((f) => f.path).sort(), [
    'index.mjs',
    'package.json',
    'vendor/lib/index.mjs',
    'vendor/lib/package.json',
  ]);
});
