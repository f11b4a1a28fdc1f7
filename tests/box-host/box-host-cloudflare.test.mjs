// The local Box host's Cloudflare container control API (protocol note §4) over raw HTTP:
// `/cloudflare/<containerId>/api/...`, one Box per container id, shapes, error bodies, timeouts,
// SSE, bytes, path confinement, auth and counters — under both isolations where bubblewrap exists.
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { hasBwrap, processesMatching } from '../support/local-host.mjs';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function call(host, id, method, route, { body, token = host.token, raw } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const init = { method, headers };
  if (raw !== undefined) init.body = raw;
  else if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(`${host.baseUrl}/cloudflare/${id}${route}`, init);
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, text, json: type === 'application/json' ? JSON.parse(text) : undefined };
}

/** Asserts a §4.3 success body and returns it. */
function ok(res) {
  assert.equal(res.status, 200, res.text);
  assert.equal(typeof res.json.success, 'boolean', res.text);
  assert.match(res.json.timestamp, ISO);
  return res.json;
}

/** Asserts a §4.1 error body with `status` and `code`. */
function failed(res, status, code) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.type, 'application/json');
  assert.equal(res.json.code, code);
  assert.equal(res.json.httpStatus, status);
  assert.equal(typeof res.json.message, 'string');
  assert.equal(typeof res.json.context, 'object');
  assert.match(res.json.timestamp, ISO);
  return res.json;
}

function exec(host, id, command, extra = {}) {
  return call(host, id, 'POST', '/api/execute', { body: { command, sessionId: '__DISABLE_SESSION__', ...extra } });
}

/** Parses SSE text into its JSON payloads. */
function sseEvents(text) {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      assert.match(block, /^data: /);
      return JSON.parse(block.slice(6));
    });
}

const modes = hasBwrap ? ['bubblewrap', 'none'] : ['none'];

for (const isolation of modes) {
  describe(`Cloudflare container API (isolation: ${isolation})`, () => {
    let host;
    let boxRoot;
    const id = `c${randomBytes(6).toString('hex')}`;
    before(async () => {
      boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-test-cf-boxes-'));
      host = await startBoxHost({ isolation, boxRoot });
    });
    after(async () => {
      await host.close();
      assert.deepEqual(fs.readdirSync(boxRoot), []);
      fs.rmSync(boxRoot, { recursive: true, force: true });
    });

    test('readiness, ping, version and session/create answer in the note’s shapes', async () => {
      const probe = await call(host, id, 'GET', '/');
      assert.equal(probe.status, 200);
      assert.equal((await call(host, id, 'GET', '/anything-else')).status, 200);
      assert.equal(ok(await call(host, id, 'GET', '/api/ping')).status, 'healthy');
      assert.equal(ok(await call(host, id, 'GET', '/api/version')).version, '0.12.10');
      const created = ok(
        await call(host, id, 'POST', '/api/session/create', {
          body: { id: 's1', env: { S: 'from-session' }, cwd: '/tmp' },
        }),
      );
      assert.deepEqual(
        { ...created, timestamp: 0 },
        { success: true, id: 's1', data: { id: 's1' }, containerPlacementId: null, timestamp: 0 },
      );
      const again = failed(
        await call(host, id, 'POST', '/api/session/create', { body: { id: 's1' } }),
        409,
        'SESSION_ALREADY_EXISTS',
      );
      assert.equal(again.context.sessionId, 's1');
      const inSession = ok(
        await call(host, id, 'POST', '/api/execute', { body: { command: 'echo "$S"; pwd', sessionId: 's1' } }),
      );
      const [env, cwd] = inSession.stdout.split('\n');
      assert.equal(env, 'from-session');
      if (isolation === 'bubblewrap') assert.equal(cwd, '/tmp');
      else assert.match(cwd, /\/tmp$/);
      assert.equal(inSession.sessionId, 's1');
    });

    test('execute: result shape, env, cwd, non-zero exit is a 200', async () => {
      ok(await call(host, id, 'POST', '/api/mkdir', { body: { path: '/workspace/sub', recursive: true } }));
      const res = ok(
        await exec(host, id, 'echo "$GREETING"; pwd; echo oops >&2; exit 3', {
          env: { GREETING: 'héllo', GONE: undefined },
          cwd: 'sub',
        }),
      );
      const expectedCwd = isolation === 'bubblewrap' ? '/workspace/sub' : undefined;
      assert.equal(res.success, false);
      assert.equal(res.exitCode, 3);
      assert.equal(res.stdout.split('\n')[0], 'héllo');
      if (expectedCwd) assert.equal(res.stdout.split('\n')[1], expectedCwd);
      else assert.match(res.stdout.split('\n')[1], /\/workspace\/sub$/);
      assert.equal(res.stderr, 'oops\n');
      assert.equal(res.command, 'echo "$GREETING"; pwd; echo oops >&2; exit 3');
      assert.equal(typeof res.duration, 'number');
      assert.equal('sessionId' in res, false, 'sessionless results carry no sessionId');
      const session = ok(await call(host, id, 'POST', '/api/execute', { body: { command: 'true' } }));
      assert.deepEqual([session.success, session.sessionId], [true, 'default']);
    });

    test('sessionless timeout: exit code 124, stderr line, no process left', async () => {
      const marker = `${37 + Math.random()}`.slice(0, 10);
      const res = ok(await exec(host, id, `sleep ${marker} & sleep ${marker}; echo never`, { timeoutMs: 300 }));
      assert.equal(res.exitCode, 124);
      assert.equal(res.success, false);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, /Command timed out after 300ms\n$/);
      assert.deepEqual(await processesMatching(`sleep ${marker}`), []);
    });

    test('session timeout: 500 COMMAND_EXECUTION_ERROR, and the tree is killed all the same', async () => {
      const marker = `${41 + Math.random()}`.slice(0, 10);
      const res = await call(host, id, 'POST', '/api/execute', {
        body: { command: `sleep ${marker}`, sessionId: 's-timeout', timeoutMs: 200 },
      });
      const body = failed(res, 500, 'COMMAND_EXECUTION_ERROR');
      assert.match(body.message, /in session 's-timeout': Command timeout after 200ms$/);
      assert.deepEqual(await processesMatching(`sleep ${marker}`), []);
    });

    test('execute/stream: SSE events arrive while the command runs; CR/LF and UTF-8 intact', async () => {
      const res = await fetch(`${host.baseUrl}/cloudflare/${id}/api/execute/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          command: `printf 'one\\r\\ntwo\\n'; sleep 1; printf 'é€😀\\r'; printf 'err\\n' >&2; exit 4`,
        }),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let firstOutputAt = null;
      const started = Date.now();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (firstOutputAt === null && text.includes('"type":"stdout"')) firstOutputAt = Date.now() - started;
      }
      const events = sseEvents(text);
      const total = Date.now() - started;
      assert.ok(
        firstOutputAt !== null && firstOutputAt < total - 500,
        `first output at ${firstOutputAt} ms of ${total} ms`,
      );
      assert.deepEqual(events[0].type, 'start');
      assert.equal(events[0].command.startsWith('printf'), true);
      assert.deepEqual(events.at(-1).type, 'complete');
      assert.equal(events.at(-1).exitCode, 4);
      for (const event of events) assert.match(event.timestamp, ISO);
      const pick = (type) =>
        events
          .filter((e) => e.type === type)
          .map((e) => e.data)
          .join('');
      assert.equal(pick('stdout'), 'one\r\ntwo\né€😀\r');
      assert.equal(pick('stderr'), 'err\n');
    });

    test('execute/stream: a reader that does not read pauses the command instead of buffering', async () => {
      // 48 MiB of output; an unread stream must hold the command back (its pipe blocks). A script,
      // so that the command lines of `head` and `sleep` are their own (not inside bash -c's).
      const marker = `${43 + Math.random()}`.slice(0, 10);
      const script = 'head -c "$1" /dev/zero | tr "\\0" a; sleep "$2"\n';
      ok(await call(host, id, 'POST', '/api/write', { body: { path: 'produce.sh', content: script } }));
      // 48 MiB plus a random few bytes: the size names this run's `head` among parallel test runs.
      const size = 50331648 + Math.floor(Math.random() * 100000);
      const command = `bash produce.sh ${size} ${marker}`;
      const url = new URL(`${host.baseUrl}/cloudflare/${id}/api/execute/stream`);
      const res = await new Promise((resolve, reject) => {
        const req = http.request(
          url,
          { method: 'POST', headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' } },
          resolve,
        );
        req.on('error', reject);
        req.end(JSON.stringify({ command }));
      });
      res.pause();
      // Not a fixed wait: the same output produced into /dev/null in the same Box, run to its end.
      // Once that control is done, the unread one must still be producing (blocked on its pipe):
      // the sleep after its output has not started.
      ok(await exec(host, id, `head -c ${size + 1} /dev/zero | tr "\\0" a > /dev/null`));
      assert.deepEqual(await processesMatching(`sleep ${marker}`), []);
      const producer = `head -c ${size} /dev/zero`;
      assert.equal((await processesMatching(producer)).length, 1, 'the producer is blocked, not finished');
      res.destroy();
      const deadline = Date.now() + 5000;
      while ((await processesMatching(producer)).length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(await processesMatching(producer), [], 'a hung-up stream kills its command');
    });

    test('write/read: bytes round trip through base64, text as UTF-8', async () => {
      const bytes = randomBytes(70_000);
      bytes[0] = 0;
      const w = ok(
        await call(host, id, 'POST', '/api/write', {
          body: { path: 'bin/data.bin', content: bytes.toString('base64'), encoding: 'base64' },
        }),
      );
      assert.equal(w.path, 'bin/data.bin');
      const r = ok(await call(host, id, 'POST', '/api/read', { body: { path: '/workspace/bin/data.bin' } }));
      assert.deepEqual(
        [r.encoding, r.isBinary, r.mimeType, r.size],
        ['base64', true, 'application/octet-stream', bytes.length],
      );
      assert.deepEqual(Buffer.from(r.content, 'base64'), bytes);
      const forced = ok(
        await call(host, id, 'POST', '/api/read', { body: { path: 'bin/data.bin', encoding: 'base64' } }),
      );
      assert.equal(forced.content, bytes.toString('base64'));
      ok(await call(host, id, 'POST', '/api/write', { body: { path: 'notes.txt', content: 'a\r\nb é€😀\n' } }));
      const text = ok(await call(host, id, 'POST', '/api/read', { body: { path: 'notes.txt' } }));
      assert.deepEqual(
        [text.content, text.encoding, text.isBinary, text.mimeType, text.size],
        ['a\r\nb é€😀\n', 'utf-8', false, 'text/plain', 15],
      );
      const seen = ok(await exec(host, id, 'cat notes.txt; od -An -tx1 -N4 bin/data.bin'));
      assert.equal(seen.stdout.startsWith('a\r\nb é€😀\n'), true);
    });

    test('mkdir, exists, delete: shapes and errors', async () => {
      const made = ok(await call(host, id, 'POST', '/api/mkdir', { body: { path: 'm/n/o', recursive: true } }));
      assert.deepEqual([made.path, made.recursive], ['m/n/o', true]);
      const flat = ok(await call(host, id, 'POST', '/api/mkdir', { body: { path: 'm/flat' } }));
      assert.equal(flat.recursive, false);
      failed(await call(host, id, 'POST', '/api/mkdir', { body: { path: 'no/such/parent' } }), 500, 'FILESYSTEM_ERROR');
      assert.equal(ok(await call(host, id, 'POST', '/api/exists', { body: { path: 'm/n/o' } })).exists, true);
      assert.equal(ok(await call(host, id, 'POST', '/api/exists', { body: { path: 'm/none' } })).exists, false);
      ok(await call(host, id, 'POST', '/api/write', { body: { path: 'm/f.txt', content: 'x' } }));
      assert.equal(ok(await call(host, id, 'POST', '/api/delete', { body: { path: 'm/f.txt' } })).path, 'm/f.txt');
      assert.equal(ok(await call(host, id, 'POST', '/api/exists', { body: { path: 'm/f.txt' } })).exists, false);
      failed(await call(host, id, 'POST', '/api/delete', { body: { path: 'm/n' } }), 400, 'IS_DIRECTORY');
      failed(await call(host, id, 'POST', '/api/delete', { body: { path: 'm/f.txt' } }), 404, 'FILE_NOT_FOUND');
    });

    test('error bodies: missing file, bad requests, unknown route', async () => {
      const missing = failed(
        await call(host, id, 'POST', '/api/read', { body: { path: '/workspace/nope.txt' } }),
        404,
        'FILE_NOT_FOUND',
      );
      assert.equal(missing.message, 'File not found: /workspace/nope.txt');
      assert.equal(missing.context.path, '/workspace/nope.txt');
      failed(await call(host, id, 'POST', '/api/execute', { raw: '{not json' }), 400, 'VALIDATION_FAILED');
      failed(await call(host, id, 'POST', '/api/execute', { body: { command: '' } }), 400, 'VALIDATION_FAILED');
      failed(
        await call(host, id, 'POST', '/api/execute', { body: { command: 'true', timeoutMs: -1 } }),
        400,
        'VALIDATION_FAILED',
      );
      failed(
        await call(host, id, 'POST', '/api/execute', { body: { command: 'true', env: { 'BAD KEY': 'x' } } }),
        400,
        'VALIDATION_FAILED',
      );
      failed(
        await call(host, id, 'POST', '/api/write', { body: { path: 'x', content: '***', encoding: 'base64' } }),
        400,
        'VALIDATION_FAILED',
      );
      failed(await call(host, id, 'POST', '/api/write', { body: { path: 'x' } }), 400, 'VALIDATION_FAILED');
      failed(await call(host, id, 'POST', '/api/read', { body: {} }), 400, 'VALIDATION_FAILED');
      failed(await call(host, id, 'POST', '/api/read', { body: { path: '/workspace' } }), 400, 'IS_DIRECTORY');
      ok(await call(host, id, 'POST', '/api/write', { body: { path: 'plain.txt', content: 'x' } }));
      failed(
        await call(host, id, 'POST', '/api/write', { body: { path: 'plain.txt/under', content: 'x' } }),
        400,
        'VALIDATION_FAILED',
      );
      failed(await call(host, id, 'POST', '/api/port-watch', { body: { port: 8080 } }), 404, 'UNKNOWN_ERROR');
      failed(await call(host, id, 'GET', '/api/nope'), 404, 'UNKNOWN_ERROR');
      const big = await call(host, id, 'POST', '/api/execute', {
        raw: JSON.stringify({ command: 'true', pad: 'x'.repeat(2 * 1024 * 1024) }),
      });
      failed(big, 413, 'VALIDATION_FAILED');
    });

    test('paths never leave the Box: .. and symlinks out are refused', async () => {
      const secret = path.join(boxRoot, '..', `vite-hub-outside-${randomBytes(4).toString('hex')}.txt`);
      fs.writeFileSync(secret, 'outside');
      try {
        for (const p of ['../../etc/passwd', '/../etc/hostname', 'a/../../../x']) {
          failed(await call(host, id, 'POST', '/api/read', { body: { path: p } }), 403, 'PERMISSION_DENIED');
          failed(
            await call(host, id, 'POST', '/api/write', { body: { path: p, content: 'x' } }),
            403,
            'PERMISSION_DENIED',
          );
        }
        // Symlinks made inside the Box that point out of it (host paths, so they escape under 'none' too).
        ok(await call(host, id, 'POST', '/api/write', { body: { path: 'ln/.keep', content: '' } }));
        for (const entry of fs.readdirSync(boxRoot)) {
          const dir = path.join(boxRoot, entry, 'workspace', 'ln');
          if (fs.existsSync(dir)) {
            fs.symlinkSync(secret, path.join(dir, 'file-out'));
            fs.symlinkSync(path.dirname(secret), path.join(dir, 'dir-out'));
          }
        }
        failed(await call(host, id, 'POST', '/api/read', { body: { path: 'ln/file-out' } }), 403, 'PERMISSION_DENIED');
        failed(
          await call(host, id, 'POST', '/api/write', { body: { path: 'ln/file-out', content: 'pwned' } }),
          403,
          'PERMISSION_DENIED',
        );
        failed(
          await call(host, id, 'POST', '/api/write', { body: { path: 'ln/dir-out/new.txt', content: 'pwned' } }),
          403,
          'PERMISSION_DENIED',
        );
        failed(
          await call(host, id, 'POST', '/api/mkdir', { body: { path: 'ln/dir-out/d', recursive: true } }),
          403,
          'PERMISSION_DENIED',
        );
        failed(
          await call(host, id, 'POST', '/api/exists', { body: { path: 'ln/file-out' } }),
          403,
          'PERMISSION_DENIED',
        );
        ok(await call(host, id, 'POST', '/api/delete', { body: { path: 'ln/file-out' } })); // removes the link only
        assert.equal(fs.readFileSync(secret, 'utf8'), 'outside');
        assert.equal(fs.existsSync(path.join(path.dirname(secret), 'new.txt')), false);
      } finally {
        fs.rmSync(secret, { force: true });
      }
    });

    test('a delete raced by a directory swapped for a symlink never removes a host file', {
      timeout: 120_000,
    }, async () => {
      // Found by the security review: the delete resolved the parent, then unlinked by path; a
      // Box renaming a symlink to a host directory in between made the host (root) delete there.
      const victims = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-delete-victim-'));
      const victim = path.join(victims, 'keep.txt');
      fs.writeFileSync(victim, 'host file');
      const racer = `r${randomBytes(5).toString('hex')}`;
      try {
        ok(
          await exec(
            host,
            racer,
            `cd /workspace && ln -s ${victims} L && mkdir -p R && touch R/keep.txt && echo ready`,
          ),
        );
        ok(
          await call(host, racer, 'POST', '/api/process/start', {
            body: {
              command: `cd /workspace && exec perl -e 'while (1) { rename("R", "d"); rename("d", "R"); rename("L", "d"); rename("d", "L"); }'`,
            },
          }),
        );
        for (let round = 0; round < 150 && fs.existsSync(victim); round += 1) {
          await exec(host, racer, 'touch /workspace/R/keep.txt 2>/dev/null; true');
          await Promise.all(
            Array.from({ length: 8 }, () =>
              call(host, racer, 'POST', '/api/delete', { body: { path: '/workspace/d/keep.txt' } }),
            ),
          );
        }
        assert.equal(fs.readFileSync(victim, 'utf8'), 'host file');
      } finally {
        await call(host, racer, 'DELETE', '');
        fs.rmSync(victims, { recursive: true, force: true });
      }
    });

    test('two container ids are two Boxes; DELETE /cloudflare/<id> removes one, the next use starts empty', async () => {
      const a = `a${randomBytes(5).toString('hex')}`;
      const b = `b${randomBytes(5).toString('hex')}`;
      ok(await call(host, a, 'POST', '/api/write', { body: { path: '/workspace/who.txt', content: 'a' } }));
      ok(await exec(host, a, 'echo a > who2'));
      assert.equal(ok(await exec(host, a, 'cat who2')).stdout, 'a\n');
      assert.equal(
        ok(await call(host, b, 'POST', '/api/exists', { body: { path: '/workspace/who.txt' } })).exists,
        false,
      );
      assert.equal(ok(await exec(host, b, 'cat who2 2>/dev/null || echo none')).stdout, 'none\n');
      const before = fs.readdirSync(boxRoot).length;
      const gone = ok(await call(host, a, 'DELETE', ''));
      assert.deepEqual([gone.id, gone.destroyed], [a, true]);
      assert.equal(fs.readdirSync(boxRoot).length, before - 1);
      assert.equal(ok(await call(host, a, 'DELETE', '')).destroyed, false);
      assert.equal(
        ok(await call(host, a, 'POST', '/api/exists', { body: { path: '/workspace/who.txt' } })).exists,
        false,
      );
      await call(host, a, 'DELETE', '');
      await call(host, b, 'DELETE', '');
    });

    test('bearer token required; counters name the routes', async () => {
      host.resetCounters();
      const none = await call(host, id, 'GET', '/api/ping', { token: null });
      assert.equal(none.status, 401);
      const wrong = await call(host, id, 'POST', '/api/execute', {
        token: 'wrong-token-123',
        body: { command: 'true' },
      });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.text.includes(host.token), false);
      assert.deepEqual(host.counters(), { requests: {}, total: 0 });
      await call(host, id, 'GET', '/api/ping');
      await exec(host, id, 'true');
      await call(host, id, 'POST', '/api/nope');
      assert.deepEqual(host.counters().requests, {
        'cloudflare/ping': 1,
        'cloudflare/execute': 1,
        'cloudflare/unknown': 1,
      });
    });
  });
}

describe('Cloudflare containers and the host capacity', () => {
  test('a container beyond maxBoxes is 503 CONTAINER_UNAVAILABLE until one is destroyed', async () => {
    const host = await startBoxHost({ isolation: 'none', maxBoxes: 1 });
    try {
      ok(await call(host, 'first', 'GET', '/api/ping'));
      const full = failed(await call(host, 'second', 'GET', '/api/ping'), 503, 'CONTAINER_UNAVAILABLE');
      assert.match(full.message, /1 Boxes/);
      assert.equal(ok(await call(host, 'first', 'DELETE', '')).destroyed, true);
      ok(await call(host, 'second', 'GET', '/api/ping'));
      // Not a container id: not a container route at all (the host's own 404).
      const bad = await call(host, 'bad%2Fid', 'GET', '/api/ping');
      assert.deepEqual([bad.status, bad.json.error.code], [404, 'not_found']);
    } finally {
      await host.close();
    }
  });
});
