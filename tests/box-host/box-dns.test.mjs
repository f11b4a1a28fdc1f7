// Name resolution in an allow-all Box on a Box network (slirp4netns), when the host's resolver
// is on the host's loopback (systemd-resolved's 127.0.0.53 style), which the Box cannot reach:
// the Box's resolv.conf names slirp4netns's forwarder (10.0.2.3), which asks the host's resolver.
// The host here is a Box host in a child process with a private mount namespace whose
// /etc/resolv.conf names 127.0.0.77, where this test answers DNS itself: no query leaves the
// machine. The Box still reaches no other port of the host's loopback (10.0.2.2, 10.0.2.3, 127.0.0.1).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { bubblewrapWorks, hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { hostApi } from '../support/local-host.mjs';

const RESOLVER = '127.0.0.77';
const ANSWER = [192, 0, 2, 1]; // TEST-NET-1: answered, never contacted
const skip = !(await bubblewrapWorks())
  ? 'bubblewrap cannot run here'
  : (await hostFeatures()).netTool === null
    ? 'no slirp4netns'
    : process.getuid?.() !== 0
      ? 'a private mount namespace with another resolv.conf needs root'
      : false;

let dns;
let tcp;
let udpEcho;
let child;
let host;
let temp;
const queries = [];

/** A DNS responder: A queries get ANSWER, any other type an empty NOERROR answer. */
function startResolver() {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, peer) => {
    let i = 12;
    const labels = [];
    while (i < msg.length && msg[i] !== 0) {
      labels.push(msg.subarray(i + 1, i + 1 + msg[i]).toString());
      i += msg[i] + 1;
    }
    const type = msg.readUInt16BE(i + 1);
    queries.push(`${labels.join('.')} ${type}`);
    const header = Buffer.from(msg.subarray(0, 12));
    header.writeUInt16BE(0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(type === 1 ? 1 : 0, 6);
    header.writeUInt32BE(0, 8);
    const answer = type === 1 ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...ANSWER]) : Buffer.alloc(0);
    socket.send(Buffer.concat([header, msg.subarray(12, i + 5), answer]), peer.port, peer.address);
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, RESOLVER, () => resolve(socket));
  });
}

before(async () => {
  if (skip) return;
  dns = await startResolver();
  // Other loopback services next to the resolver: the forwarder must not lead to them.
  tcp = net.createServer((socket) => socket.end('TCP-REACHED\n'));
  await new Promise((resolve) => tcp.listen(5399, RESOLVER, resolve));
  udpEcho = dgram.createSocket('udp4');
  udpEcho.on('message', (_, peer) => udpEcho.send('UDP-REACHED', peer.port, peer.address));
  await new Promise((resolve) => udpEcho.bind(5398, RESOLVER, resolve));
  temp = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-dns-'));
  fs.writeFileSync(path.join(temp, 'resolv.conf'), `nameserver ${RESOLVER}\n`);
  fs.writeFileSync(
    path.join(temp, 'host.mjs'),
    `
const { startBoxHost } = await import(process.argv[2]);
const host = await startBoxHost({ isolation: 'bubblewrap' });
process.stdout.write(JSON.stringify({ baseUrl: host.baseUrl, token: host.token }) + '\\n');
process.stdin.resume();
process.stdin.on('end', async () => { await host.close(); process.exit(0); });
`,
  );
  child = spawn(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      'mount --bind "$0" /etc/resolv.conf && exec "$1" "$2" "$3"',
      path.join(temp, 'resolv.conf'),
      process.execPath,
      path.join(temp, 'host.mjs'),
      import.meta.resolve('@vite-hub/sandbox/box-host'),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  host = JSON.parse(
    await new Promise((resolve, reject) => {
      child.stdout.once('data', (line) => resolve(String(line)));
      child.once('exit', (code) => reject(new Error(`the Box host child exited ${code}`)));
    }),
  );
});

after(async () => {
  if (child && child.exitCode === null) {
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  }
  dns?.close();
  tcp?.close();
  udpEcho?.close();
  if (temp) fs.rmSync(temp, { recursive: true, force: true });
});

const api = async (method, route, body) => (await hostApi(host, method, route, body)).text;

async function run(sid, script) {
  const text = await api('POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
    command: 'sh',
    args: ['-c', script],
    wait: true,
    timeout: 20_000,
  });
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((l) => l.stream === 'stdout')
    .map((l) => l.data)
    .join('');
}

const connect = (port, address) =>
  `node -e "require('net').connect(${port},'${address}').on('data',d=>console.log(String(d).trim())).on('error',e=>console.log(e.code))"`;

test('an allow-all Box resolves names through the forwarder when the host resolver is on loopback', {
  skip,
  timeout: 60_000,
}, async () => {
  const sid = JSON.parse(await api('POST', '/v3/sandboxes', { projectId: 'p', ports: [] })).session.id;
  const out = await run(sid, 'cat /etc/resolv.conf; getent ahostsv4 probe.vite-hub.test | head -1; echo rc=$?');
  assert.match(out, /^nameserver 10\.0\.2\.3\n/);
  assert.match(out, /^192\.0\.2\.1\s+STREAM probe\.vite-hub\.test$/m);
  assert.ok(queries.includes('probe.vite-hub.test 1'), queries.join());
});

test('the forwarder leads only to DNS: other ports of the host loopback stay unreachable', {
  skip,
  timeout: 60_000,
}, async () => {
  const sid = JSON.parse(await api('POST', '/v3/sandboxes', { projectId: 'p', ports: [] })).session.id;
  const { port } = new URL(host.baseUrl);
  const udp = `node -e "const s=require('dgram').createSocket('udp4');s.on('message',m=>{console.log(String(m));process.exit()});s.send('x',5398,'10.0.2.3');setTimeout(()=>{console.log('udp-no-answer');process.exit()},1500)"`;
  const out = await run(
    sid,
    [connect(5399, '10.0.2.3'), connect(port, '10.0.2.2'), connect(port, '127.0.0.1'), udp].join('; '),
  );
  assert.doesNotMatch(out, /REACHED/);
  assert.equal(out.split('\n').filter(Boolean).length, 4, out);
  assert.match(out, /udp-no-answer/);
});
