// How the host reaches a TCP port a Box's command listens on (port-proxy.mjs), by where the Box's
// network is:
//
// - A Box network (bubblewrap with slirp4netns, box-network.mjs): the Box's loopback is in a
//   network namespace of its own, which the host's loopback cannot see and which cannot see the
//   host's (`--disable-host-loopback`). A forwarder enters that namespace (`nsenter --net=`, with
//   the user namespace that owns it when the host is not root) and listens on one Unix socket per
//   declared port, in a directory only this host's user may open (0700, outside every Box's mounts);
//   each connection to it is a connection to 127.0.0.1:<port> (or [::1]:<port>) inside the Box.
//   No TCP port is opened on the host for it (slirp4netns's `add_hostfwd` would listen on the
//   host's loopback, where any process of the machine could reach it), and no other Box can
//   reach it: another Box's commands see neither the directory nor this namespace.
// - The host's network (`isolation: 'none'`, Seatbelt, bubblewrap without slirp4netns): the Box's
//   commands listen on this machine's loopback, where the host connects as any process can. There
//   the port is open to every process of the machine, other Boxes included: the proxy adds no
//   isolation a shared network does not have (docs/sessions.md says so).
//
// A `deny-all` Box has no shared namespace to enter (each command has its own): checkPorts
// refuses `ports` there.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SYSTEM_PATH } from './box-toolchain.mjs';
import { SpawnError } from './command.mjs';
import { inheritedFds, stdioCovering } from './inherited-fds.mjs';

/** How long the forwarder may take to listen (ms). */
const FORWARDER_START_MS = 10_000;

// The forwarder, run by the host's own Node inside the Box's network namespace: argv is the
// socket directory, then the ports. It exits when the host closes its stdin (or dies).
const FORWARDER = `
const net = require('node:net');
const path = require('node:path');
const [dir, ...ports] = process.argv.slice(1);
function forward(port, client) {
  client.on('error', () => {});
  const hosts = ['127.0.0.1', '::1'];
  const attempt = () => {
    const box = net.connect(port, hosts.shift());
    box.once('connect', () => {
      box.on('error', () => client.destroy());
      box.on('close', () => client.destroy());
      client.on('close', () => box.destroy());
      client.pipe(box);
      box.pipe(client);
    });
    box.once('error', () => {
      if (box.connecting && hosts.length > 0) attempt();
      else client.destroy();
    });
  };
  attempt();
}
let listening = 0;
for (const port of ports) {
  net.createServer((client) => forward(Number(port), client)).listen(path.join(dir, port + '.sock'), () => {
    listening += 1;
    if (listening === ports.length) process.stdout.write('ready\\n');
  });
}
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
`;

/** Connects to 127.0.0.1:port, then [::1]:port when nothing listens there; `done(err, socket)`. */
function connectLoopback(port, done) {
  const hosts = ['127.0.0.1', '::1'];
  const attempt = () => {
    const socket = net.connect(port, hosts.shift());
    socket.once('connect', () => done(null, socket));
    socket.once('error', (err) => {
      if (socket.connecting && hosts.length > 0) attempt();
      else done(err);
    });
  };
  attempt();
}

/**
 * The ports of the host's network that a Box of this process declared: port → Box directory. On
 * a shared network a port is one for every Box, so a second Box may not declare it while the
 * first holds it: its URL would reach the first Box's server (the fresh-user trial of issue 35).
 */
const heldHostPorts = new Map();

/** Whether something already listens on 127.0.0.1:`port` (a bind that finds it in use). */
function loopbackInUse(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err) => resolve(/** @type {NodeJS.ErrnoException} */ (err).code === 'EADDRINUSE'));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/**
 * The reach of a Box on the host's network: its declared ports are held for it (refused when
 * another Box of this host holds one, or when a process of the machine already listens there) and
 * given back at close.
 */
class HostReach {
  /** @param {string} root the Box directory @param {number[]} ports */
  constructor(root, ports) {
    this.root = root;
    this.ports = [];
    this.ready = this.#hold(ports);
  }

  async #hold(ports) {
    for (const port of ports) {
      const holder = heldHostPorts.get(port);
      if (holder !== undefined && holder !== this.root)
        throw new PortTakenError(`port ${port} is declared by another Box of this host, on the machine's network`);
      heldHostPorts.set(port, this.root);
      this.ports.push(port);
    }
    for (const port of ports)
      if (await loopbackInUse(port))
        throw new PortTakenError(`port ${port} is already in use on this machine's loopback`);
  }

  connect(port, done) {
    connectLoopback(port, done);
  }

  close() {
    for (const port of this.ports) if (heldHostPorts.get(port) === this.root) heldHostPorts.delete(port);
    this.ports = [];
  }
}

/** A declared port the host's network cannot give the Box (answered 409). */
export class PortTakenError extends Error {}

/** The reach of a Box on a Box network: the forwarder in its namespace (started at once). */
class NamespaceReach {
  /** @param {string} root the Box directory @param {{ netns: string, userns?: string }} network @param {number[]} ports */
  constructor(root, network, ports) {
    // In the Box directory (which no command sees: they see its work directory, /tmp and home),
    // so a host that dies leaves it to the sweep of stale Box directories; elsewhere when a socket
    // path there would pass the 107 bytes a Unix socket path may have.
    const inRoot = path.join(root, '.vite-hub-ports');
    if (path.join(inRoot, '65535.sock').length < 100) {
      fs.mkdirSync(inRoot, { mode: 0o700 });
      this.dir = inRoot;
    } else {
      this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-ports-'));
    }
    fs.chmodSync(this.dir, 0o700);
    const enter = network.userns
      ? [`--user=${network.userns}`, `--net=${network.netns}`, '--preserve-credentials']
      : [`--net=${network.netns}`];
    const args = [...enter, '--', process.execPath, '-e', FORWARDER, this.dir, ...ports.map(String)];
    this.ready = new Promise((resolve, reject) => {
      let child;
      try {
        child = spawn('nsenter', args, {
          stdio: stdioCovering(['pipe', 'pipe', 'pipe'], inheritedFds()),
          detached: true,
          env: { PATH: SYSTEM_PATH },
        });
      } catch (err) {
        reject(new SpawnError(err, 'the port forwarder'));
        return;
      }
      this.child = child;
      let problem = '';
      const timer = setTimeout(
        () => reject(new Error(`the port forwarder did not listen within ${FORWARDER_START_MS}ms`)),
        FORWARDER_START_MS,
      );
      child.on('error', (err) => reject(new SpawnError(err, 'the port forwarder')));
      child.stdin?.on('error', () => {});
      child.stderr?.on('data', (chunk) => {
        problem = (problem + chunk).slice(-1000);
      });
      child.once('exit', (code, signal) =>
        reject(new Error(`the port forwarder exited (${signal ?? `code ${code}`}): ${problem.trim()}`)),
      );
      child.stdout?.once('data', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      // Never keeps the host's event loop alive.
      child.unref();
      for (const stream of child.stdio) /** @type {net.Socket | null} */ (stream)?.unref?.();
    });
    this.ready.catch(() => this.close());
  }

  connect(port, done) {
    this.ready.then(
      () => {
        const socket = net.connect(path.join(this.dir, `${port}.sock`));
        socket.once('connect', () => done(null, socket));
        socket.once('error', (err) => done(err));
      },
      (err) => done(err),
    );
  }

  close() {
    this.child?.kill('SIGKILL');
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * How the host reaches the declared `ports` of `box`: `{ ready (resolves once connections can be
 * made, rejects with an Error saying why not), connect(port, done(err, socket)), close() }`.
 * @param {{ root: string, network?: { netns: string, userns?: string } }} box
 * @param {number[]} ports
 */
export function boxPortReach(box, ports) {
  return box.network?.netns ? new NamespaceReach(box.root, box.network, ports) : new HostReach(box.root, ports);
}
