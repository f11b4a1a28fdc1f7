// The exit path of a host (a process `exit` listener) removes this process's Box directories and
// nothing else (issue 32, item 6): on a shared /tmp a root host's exit removed any directory with
// its name pattern, without the owner check its start-up sweep has. Here a directory named as
// this process's but owned by another user must survive, and one of its own must go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { boxDirPrefix, removeOwnBoxDirsNow } from '../../pkg-template/box-host/engine/stale-boxes.mjs';

const NOBODY = 65534;

test("the exit sweep removes this process's Box directories, not one another user made under that name", {
  skip: process.getuid() === 0 ? false : 'needs root to make a directory owned by another user',
}, (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'exit-sweep-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const own = path.join(root, `${boxDirPrefix()}Own123`);
  const foreign = path.join(root, `${boxDirPrefix()}Other1`);
  fs.mkdirSync(own);
  fs.writeFileSync(path.join(own, 'file'), 'x');
  fs.mkdirSync(foreign);
  fs.writeFileSync(path.join(foreign, 'file'), 'kept');
  fs.chownSync(foreign, NOBODY, NOBODY);
  removeOwnBoxDirsNow(root);
  assert.equal(fs.existsSync(own), false, 'its own Box directory is removed');
  assert.equal(fs.readFileSync(path.join(foreign, 'file'), 'utf8'), 'kept', "another user's directory stays");
});
