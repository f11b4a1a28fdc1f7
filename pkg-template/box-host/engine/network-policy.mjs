// A running Box's network policy, changed (`POST …/network-policy`): the commands started from
// then on get the new one, those already running keep the network they started with (a process
// cannot be moved out of its network namespace).
//
// - deny-all: the next commands start in a network namespace of their own with only a loopback
//   (bubblewrap without --share-net, Seatbelt's deny rule); a Box network made earlier stays up,
//   unused, for a later allow-all.
// - allow-all: the next commands enter the Box network (box-network.mjs), started now when the
//   Box was created under deny-all; without slirp4netns they share this machine's network, which
//   the registry's rule refuses in production, as at create.
// - anything else (an allow list, subnet rules): 400, as at create; the host enforces only these two.
// The rule of what a policy means and what this host refuses is the registry's (networkDeniedBy),
// the executionAuthority the Box reports after it isolation.mjs's: the same as at create.
import { BoxRequestError } from './box.mjs';
import { startBoxNetwork } from './box-network.mjs';
import { executionAuthority } from './isolation.mjs';

/** The change in progress per Box: changes of one Box apply in the order they came. */
const changing = new WeakMap();

/**
 * Applies `networkPolicy` (a request body: `{ mode }`, or the strings) to the running `box` of
 * `registry`. Throws a BoxRequestError: 400 for a policy this host cannot express, 503
 * `isolation_unavailable` for one it cannot enforce, 500 when the Box network could not be
 * started, 410 when the Box stopped meanwhile.
 * @param {import('./registry.mjs').BoxRegistry} registry
 * @param {import('./box.mjs').Box} box
 * @param {unknown} networkPolicy
 */
export function applyNetworkPolicy(registry, box, networkPolicy) {
  const denied = registry.networkDeniedBy(networkPolicy);
  const previous = changing.get(box) ?? Promise.resolve();
  const applied = previous.catch(() => {}).then(() => apply(box, denied));
  changing.set(box, applied);
  return applied;
}

async function apply(box, denied) {
  const stopped = () => new BoxRequestError(410, 'sandbox_stopped', `Sandbox session ${box.id} is stopped`);
  if (!box.running) throw stopped();
  if (!denied && box.network === undefined && box.isolation === 'bubblewrap' && box.features?.netTool) {
    let network;
    try {
      network = await startBoxNetwork();
    } catch (err) {
      throw Object.assign(
        new BoxRequestError(500, 'internal_error', `the Box network could not be set up: ${err.message}`),
        { cause: err },
      );
    }
    // Stopped while it came up: its stop() did not see it.
    if (!box.running) {
      network.stop();
      throw stopped();
    }
    box.network = network;
  }
  if (box.networkDenied !== denied) {
    box.networkDenied = denied;
    // A parked process was started under the old policy: no later command may take it.
    box.retireParked();
  }
  box.executionAuthority = executionAuthority(box.isolation, denied, box.network !== undefined);
}
