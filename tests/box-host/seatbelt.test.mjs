// Seatbelt profile generator of the local Box host (macOS isolation): pure unit tests of the SBPL
// text, the sandbox-exec argv and the probe classifier. They run anywhere; nothing is applied.
// The profile is parsed as s-expressions, so the assertions look at rules, not at substrings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SANDBOX_EXEC,
  seatbeltProfile,
  seatbeltArgs,
  probeSeatbeltArgs,
  classifySeatbeltProbe,
} from '../../pkg-template/box-host/engine/seatbelt.mjs';

const HOME = '/Users/me';
const NODE = '/Users/me/.nvm/versions/node/v22.1.0';
const BOX = '/private/var/folders/ab/xyz/T/vite-hub-box-1-abc';
const base = { writableDirs: [BOX], readableDirs: [NODE], hiddenDirs: [HOME], networkDenied: true };

/** Parses SBPL into nested arrays; strings become { str }, `#"..."` regexes { regex }, symbols strings. */
function parse(text) {
  let i = 0;
  const forms = [];
  const stack = [forms];
  while (i < text.length) {
    const c = text[i];
    if (c === ';') while (i < text.length && text[i] !== '\n') i++;
    else if (/\s/.test(c)) i++;
    else if (c === '(') {
      const list = [];
      stack.at(-1).push(list);
      stack.push(list);
      i++;
    } else if (c === ')') {
      assert.ok(stack.length > 1, `unbalanced ) at ${i}`);
      stack.pop();
      i++;
    } else if (c === '"' || (c === '#' && text[i + 1] === '"')) {
      const isRegex = c === '#';
      i += isRegex ? 2 : 1;
      let s = '';
      while (text[i] !== '"') {
        assert.ok(i < text.length, 'unterminated string');
        if (text[i] === '\\') i++;
        s += text[i++];
      }
      i++;
      stack.at(-1).push(isRegex ? { regex: s } : { str: s });
    } else {
      const m = /^[^\s()";]+/.exec(text.slice(i));
      stack.at(-1).push(m[0]);
      i += m[0].length;
    }
  }
  assert.equal(stack.length, 1, 'unbalanced (');
  return forms;
}

/** Top-level rules as { index, action, ops: string[], filters: array[] }. */
function rules(profile) {
  return parse(profile).map((form, index) => {
    const [action, ...rest] = form;
    return {
      index,
      action,
      ops: rest.filter((x) => typeof x === 'string'),
      filters: rest.filter((x) => Array.isArray(x)),
    };
  });
}

/** The path strings of `(kind "...")` filters of rules with `action` on `op`. */
function paths(profile, action, op, kind = 'subpath') {
  return rules(profile)
    .filter((r) => r.action === action && r.ops.includes(op))
    .flatMap((r) => r.filters.filter((f) => f[0] === kind).map((f) => f[1].str));
}

test('the profile is version 1 and denies by default, before any allow', () => {
  const all = rules(seatbeltProfile(base));
  assert.deepEqual(all[0], { index: 0, action: 'version', ops: ['1'], filters: [] });
  assert.deepEqual(all[1], { index: 1, action: 'deny', ops: ['default'], filters: [] });
  assert.ok(!all.some((r) => r.action === 'allow' && r.ops.includes('default')));
});

test('file-write* is allowed only below the Box dirs, in both /var spellings', () => {
  const profile = seatbeltProfile({ ...base, writableDirs: [BOX, '/tmp/box-2/'] });
  const writes = rules(profile).filter((r) => r.action === 'allow' && r.ops.some((op) => op.startsWith('file-write')));
  // Every write rule has a filter: an unfiltered one would open the whole disk.
  for (const r of writes) assert.ok(r.filters.length > 0, JSON.stringify(r));
  assert.deepEqual(
    paths(profile, 'allow', 'file-write*').sort(),
    ['/private/tmp/box-2', BOX, '/tmp/box-2', BOX.replace('/private', '')].sort(),
  );
  // Other write grants are data writes on devices only.
  const otherWrites = writes.filter((r) => !r.ops.includes('file-write*'));
  for (const r of otherWrites) {
    assert.deepEqual(
      r.ops.filter((op) => op.startsWith('file-write')),
      ['file-write-data'],
    );
    for (const f of r.filters.flatMap((f) => (f[0] === 'require-all' ? f.slice(1) : [f]))) {
      const target = f[1]?.str ?? f[1]?.regex ?? '';
      if (f[0] === 'literal' || f[0] === 'subpath' || f[0] === 'regex') assert.match(target, /^\^?\/dev\//);
    }
  }
});

test('no writable dirs means no file-write* rule at all, never an unfiltered one', () => {
  const all = rules(seatbeltProfile({ ...base, writableDirs: [] }));
  assert.ok(!all.some((r) => r.ops.includes('file-write*')));
  assert.throws(() => seatbeltProfile({ ...base, writableDirs: ['/'] }), TypeError);
});

test('a hidden home is denied for reads; the toolchain inside it is re-allowed after the deny', () => {
  const all = rules(seatbeltProfile(base));
  const deny = all.find((r) => r.action === 'deny' && r.ops.includes('file-read*'));
  assert.deepEqual(deny.filters, [['subpath', { str: HOME }]]);
  const reallow = all.find(
    (r) => r.action === 'allow' && r.ops.includes('file-read*') && r.filters.some((f) => f[1]?.str === NODE),
  );
  assert.ok(reallow, 'toolchain re-allowed');
  assert.ok(reallow.index > deny.index, 'the re-allow must come after the deny (last matching rule wins)');
  // Box dirs stay readable too, and the broad system allow comes before the deny.
  assert.ok(reallow.filters.some((f) => f[1]?.str === BOX));
  const system = all.find(
    (r) => r.action === 'allow' && r.ops.includes('file-read*') && r.filters.some((f) => f[1]?.str === '/usr'),
  );
  assert.ok(system.index < deny.index);
  // realpath may lstat the home and its ancestors, but not list or read them.
  const meta = paths(seatbeltProfile(base), 'allow', 'file-read-metadata', 'literal');
  for (const dir of ['/Users', HOME, `${HOME}/.nvm`, `${HOME}/.nvm/versions/node`]) assert.ok(meta.includes(dir), dir);
  assert.ok(!paths(seatbeltProfile(base), 'allow', 'file-read*').includes(HOME));
  // No hidden dirs: no deny rule.
  assert.ok(
    !rules(seatbeltProfile({ ...base, hiddenDirs: [] })).some(
      (r) => r.action === 'deny' && r.ops.includes('file-read*'),
    ),
  );
});

test('networkDenied: true has no network allow; false allows outbound, inbound and bind with DNS', () => {
  const netOps = ['network-outbound', 'network-inbound', 'network-bind', 'network*', 'system-socket'];
  const denied = rules(seatbeltProfile(base));
  assert.deepEqual(
    denied.filter((r) => r.action === 'allow' && r.ops.some((op) => netOps.includes(op))),
    [],
  );
  const mach = (all) => all.filter((r) => r.ops.includes('mach-lookup')).flatMap((r) => r.filters.map((f) => f[1].str));
  assert.ok(!mach(denied).includes('com.apple.SystemConfiguration.DNSConfiguration'));
  const open = rules(seatbeltProfile({ ...base, networkDenied: false }));
  for (const op of ['network-outbound', 'network-inbound', 'network-bind']) {
    assert.ok(
      open.some((r) => r.action === 'allow' && r.ops.includes(op)),
      op,
    );
  }
  assert.ok(mach(open).includes('com.apple.SystemConfiguration.DNSConfiguration'));
  assert.ok(mach(open).includes('com.apple.trustd.agent'));
  assert.throws(() => seatbeltProfile({ ...base, networkDenied: undefined }), TypeError);
});

test('mach-host*, same-sandbox signals and the devices Node needs are allowed', () => {
  const all = rules(seatbeltProfile(base));
  assert.ok(all.some((r) => r.action === 'allow' && r.ops.includes('mach-host*')));
  for (const op of ['signal', 'process-info*']) {
    const r = all.find((x) => x.action === 'allow' && x.ops.includes(op));
    assert.deepEqual(r.filters, [['target', 'same-sandbox']], op);
  }
  // (deny default) does not cover process-info*: an explicit deny precedes the same-sandbox allow.
  const infoDeny = all.find((x) => x.action === 'deny' && x.ops.includes('process-info*'));
  assert.ok(infoDeny && infoDeny.filters.length === 0);
  assert.ok(infoDeny.index < all.find((x) => x.action === 'allow' && x.ops.includes('process-info*')).index);
  const devices = paths(seatbeltProfile(base), 'allow', 'file-write-data', 'literal');
  for (const dev of ['/dev/null', '/dev/urandom', '/dev/random', '/dev/zero']) assert.ok(devices.includes(dev), dev);
  assert.ok(paths(seatbeltProfile(base), 'allow', 'file-read*').includes('/dev/fd'));
  assert.ok(paths(seatbeltProfile(base), 'allow', 'file-read*').includes('/private/etc'));
  assert.ok(paths(seatbeltProfile(base), 'allow', 'file-read*').includes('/etc'));
});

test('paths with " and \\ are escaped and read back unchanged', () => {
  const odd = '/Users/me/a "quoted" \\ dir';
  const profile = seatbeltProfile({ ...base, writableDirs: [odd] });
  assert.ok(profile.includes('(subpath "/Users/me/a \\"quoted\\" \\\\ dir")'), profile);
  assert.deepEqual(paths(profile, 'allow', 'file-write*'), [odd]);
});

test('relative paths, NUL and line breaks are refused with a TypeError', () => {
  for (const bad of ['relative/dir', './x', '', '/a\0b', '/a\nb', '/a\rb', 42]) {
    for (const key of ['writableDirs', 'readableDirs', 'hiddenDirs']) {
      assert.throws(() => seatbeltProfile({ ...base, [key]: [bad] }), TypeError, `${key} ${JSON.stringify(bad)}`);
    }
  }
  assert.throws(() => seatbeltProfile({ ...base, writableDirs: BOX }), TypeError);
});

test('the output is deterministic for shuffled and duplicated inputs', () => {
  const w = ['/Volumes/x/box-b', '/Volumes/x/box-a', '/private/tmp/box-c'];
  const r = ['/opt/n/b', '/opt/n/a'];
  const h = ['/Users/b', '/Users/a'];
  const a = seatbeltProfile({ writableDirs: w, readableDirs: r, hiddenDirs: h, networkDenied: false });
  const b = seatbeltProfile({
    writableDirs: [w[2], w[0], w[1], w[0], '/tmp/box-c'],
    readableDirs: [r[1], r[0]],
    hiddenDirs: [h[1], h[0], h[1]],
    networkDenied: false,
  });
  assert.equal(a, b);
  assert.deepEqual(paths(a, 'deny', 'file-read*'), ['/Users/a', '/Users/b']);
});

test('seatbeltArgs runs the absolute sandbox-exec and refuses a PATH-relative program', () => {
  assert.equal(SANDBOX_EXEC, '/usr/bin/sandbox-exec');
  const profile = seatbeltProfile(base);
  const spec = seatbeltArgs(profile, '/usr/local/bin/node', ['-e', '1']);
  assert.deepEqual(spec, {
    file: '/usr/bin/sandbox-exec',
    args: ['-p', profile, '--', '/usr/local/bin/node', '-e', '1'],
  });
  assert.ok(!spec.args.includes('sandbox-exec'));
  assert.throws(() => seatbeltArgs(profile, 'node', []), TypeError);
  assert.throws(() => seatbeltArgs('', '/bin/sh', []), TypeError);
  const probe = probeSeatbeltArgs();
  assert.equal(probe.file, SANDBOX_EXEC);
  assert.equal(probe.args[0], '-p');
  assert.deepEqual(probe.args.slice(2), ['--', '/usr/bin/true']);
  assert.deepEqual(
    rules(probe.args[1]).map((x) => [x.action, ...x.ops]),
    [
      ['version', '1'],
      ['allow', 'default'],
    ],
  );
});

test('classifySeatbeltProbe: success, nesting (exit 71), missing binary, other failures', () => {
  assert.deepEqual(classifySeatbeltProbe({ exitCode: 0, stderr: '' }), { works: true });
  const nested = classifySeatbeltProbe({
    exitCode: 71,
    stderr: 'sandbox-exec: sandbox_apply: Operation not permitted\n',
  });
  assert.equal(nested.works, false);
  assert.match(nested.reason, /already inside a Seatbelt sandbox/);
  assert.match(nested.reason, /isolation: 'none'/);
  assert.deepEqual(classifySeatbeltProbe({ exitCode: 71, stderr: '' }), nested);
  assert.deepEqual(classifySeatbeltProbe({ exitCode: 1, stderr: 'sandbox_apply: Operation not permitted' }), nested);
  const missing = classifySeatbeltProbe({ exitCode: 'ENOENT', stderr: '' });
  assert.equal(missing.works, false);
  assert.match(missing.reason, /\/usr\/bin\/sandbox-exec is missing/);
  const other = classifySeatbeltProbe({ exitCode: 65, stderr: 'sandbox-exec: syntax error\nmore' });
  assert.deepEqual(other, { works: false, reason: '/usr/bin/sandbox-exec failed (65): sandbox-exec: syntax error' });
  assert.match(classifySeatbeltProbe({ exitCode: null }).reason, /killed/);
});

test('the network, when allowed, is IP only, and no terminal the Box did not open is writable', () => {
  const profile = seatbeltProfile({
    writableDirs: ['/private/var/folders/x/T/box'],
    readableDirs: [],
    hiddenDirs: [],
    networkDenied: false,
  });
  const networkRules = profile.split('\n').filter((line) => /^\(allow network-/.test(line));
  assert.deepEqual(
    networkRules,
    [
      '(allow network-outbound (remote ip "*:*"))',
      '(allow network-inbound (local ip "*:*"))',
      '(allow network-bind (local ip "*:*"))',
    ],
    'an unfiltered network-outbound also connects Unix sockets (a Docker daemon)',
  );
  const ttyRules = profile.split('\n').filter((line) => line.includes('/dev/ttys'));
  assert.ok(ttyRules.length > 0);
  for (const line of ttyRules) assert.match(line, /com\.apple\.sandbox\.pty/, `only ptys the Box opened: ${line}`);
});
