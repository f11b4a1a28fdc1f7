// The network of an `allow-all` Box under bubblewrap: a network namespace of its own, held by a
// small process (`unshare --net -- cat`; a host that is not root makes it inside a user namespace
// of its own, `unshare --user --map-root-user --net`, and its commands enter both with
// `nsenter --user --net --preserve-credentials`), with outbound access through slirp4netns
// (`--disable-host-loopback`: the host's 127.0.0.1, the Box host API included, is unreachable).
// Every command of the Box enters it (`nsenter --net=…` around bwrap `--share-net`), so commands
// of one Box share it as on a provider's Box.
//
// Why not slirp4netns on bwrap's own namespace: bwrap (as root) puts the sandbox in a nested user
// namespace, and slirp4netns's setns into its network namespace fails with EPERM here; a
// namespace created by the host itself has no such owner problem.
//
// Both helpers read a pipe from the host: when the host process dies they see EOF and exit, so
// no helper outlives its host.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { SYSTEM_PATH } from './box-toolchain.mjs';
import { SpawnError } from './command.mjs';
import { inheritedFds, stdioCovering } from './inherited-fds.mjs';

/** How long the namespace and slirp4netns may take to come up (ms). */
const START_TIMEOUT_MS = 10_000;

function exited(child, what) {
  return new Promise((_, reject) => {
    child.once('error', (err) => reject(new SpawnError(err, what)));
    child.once('exit', (code, signal) => reject(new Error(`${what} exited (${signal ?? `code ${code}`})`)));
  });
}

/**
 * Starts helper `file args` (detached, the system PATH, /dev/null over the fds this process would
 * leak into it: inherited-fds.mjs) and listens for its end at once: `{ child, gone }`, `gone`
 * rejecting when it could not start or exited. Rejects with a SpawnError when the host could not
 * start it (EMFILE at the app's fd limit), before anything touches its pipes.
 */
async function startHelper(file, args, stdio, what) {
  let child;
  try {
    child = spawn(file, args, {
      stdio: stdioCovering(stdio, inheritedFds()),
      detached: true,
      env: { PATH: SYSTEM_PATH },
    });
  } catch (err) {
    throw new SpawnError(err, what);
  }
  const gone = exited(child, what);
  gone.catch(() => {});
  // Not started: its pipes were never made, and 'error' tells why on the next tick.
  if (child.pid === undefined) await gone;
  return { child, gone };
}

async function namespaceReady(pid) {
  const own = fs.readlinkSync('/proc/self/ns/net');
  for (let i = 0; i < 200; i += 1) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/ns/net`) !== own) return;
    } catch {
      // not there yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the network namespace did not appear');
}

/**
 * Starts a Box network; resolves `{ netns (a /proc path for nsenter --net=), userns (the user
 * namespace that owns it, when `rootless`; else undefined), stop(), alive() }` or rejects with an
 * Error saying what failed (nothing is left running then). slirp4netns joins the holder's user
 * namespace by itself when given its pid (slirp4netns(1)).
 */
export async function startBoxNetwork({ rootless = process.geteuid?.() !== 0 } = {}) {
  const unshare = rootless ? ['--user', '--map-root-user', '--net', '--', 'cat'] : ['--net', '--', 'cat'];
  const { child: holder, gone: holderGone } = await startHelper(
    'unshare',
    unshare,
    ['pipe', 'ignore', 'pipe'],
    'unshare --net',
  );
  holder.stdin.on('error', () => {});
  let holderProblem = '';
  holder.stderr.on('data', (chunk) => {
    holderProblem = (holderProblem + chunk).slice(-1000);
  });
  let slirp;
  const stop = () => {
    for (const child of [slirp, holder]) {
      if (!child) continue;
      child.kill('SIGKILL');
      // Its pipes are closed with it: one nobody reads (slirp4netns's exit fd) would stay open
      // for good, a socket of this process per Box network (issue 34).
      for (const stream of child.stdio) stream?.destroy();
    }
  };
  let timer;
  try {
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the Box network did not come up within ${START_TIMEOUT_MS}ms`)),
        START_TIMEOUT_MS,
      );
    });
    await Promise.race([
      namespaceReady(holder.pid),
      holderGone.catch((err) => Promise.reject(new Error(`${err.message}: ${holderProblem.trim()}`))),
      deadline,
    ]);
    const started = await startHelper(
      'slirp4netns',
      [
        '--configure',
        '--mtu=65520',
        '--disable-host-loopback',
        '--ready-fd=3',
        '--exit-fd=4',
        String(holder.pid),
        'tap0',
      ],
      ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      'slirp4netns',
    );
    slirp = started.child;
    const slirpGone = started.gone;
    let problem = '';
    slirp.stderr.on('data', (chunk) => {
      problem = (problem + chunk).slice(-1000);
    });
    slirp.stdio[4].on('error', () => {});
    const ready = new Promise((resolve) => slirp.stdio[3].once('data', resolve));
    await Promise.race([
      ready,
      slirpGone.catch((err) =>
        Promise.reject(new Error(`${err.message}: ${problem.trim().split('\n').slice(-2).join(' | ')}`)),
      ),
      holderGone,
      deadline,
    ]);
    // The helpers never keep the host's event loop alive.
    for (const child of [holder, slirp]) {
      child.unref();
      // A pipe to a child is a net.Socket, which has unref().
      for (const stream of child.stdio) /** @type {import('node:net').Socket | null} */ (stream)?.unref?.();
    }
    const alive = () =>
      holder.exitCode === null && holder.signalCode === null && slirp.exitCode === null && slirp.signalCode === null;
    return {
      netns: `/proc/${holder.pid}/ns/net`,
      userns: rootless ? `/proc/${holder.pid}/ns/user` : undefined,
      stop,
      alive,
    };
  } catch (err) {
    stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
