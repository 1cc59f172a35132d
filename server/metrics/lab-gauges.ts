/**
 * What the lab's gauges say at a scrape, as pure functions of facts the
 * scrape gathered (the kernel registry's states, the hosts' views). Labels
 * carry only the operator's host ids and fixed words — never a notebook's
 * title, a user's name, or an id that grows with use.
 */
import type { HostView } from "../core/protocol/hosts-model";
import type { KernelStatus } from "../core/protocol/notebook-model";

/** The states a kernel of an open notebook is counted in ("not-started" and "shutdown" have no kernel). */
export const KERNEL_STATES = ["starting", "idle", "busy", "interrupting", "restarting", "refused", "dead"] as const;
export type CountedKernelState = (typeof KERNEL_STATES)[number];

/** The host label of a kernel whose host is not known (none configured for its notebook). */
export const UNKNOWN_HOST = "unknown";

export interface KernelFact {
  notebookId: string;
  state: KernelStatus["state"];
  hostId: string | null;
  /** Waiting in its host's GPU queue. */
  queued: boolean;
}

function isCounted(state: KernelStatus["state"]): state is CountedKernelState {
  return (KERNEL_STATES as readonly string[]).includes(state);
}

/** Kernels by host and state. Every configured host gets every state, 0 included, so a query finds 0 rather than nothing. */
export function kernelCounts(kernels: Iterable<KernelFact>, hostIds: readonly string[]): Array<{ host: string; state: CountedKernelState; value: number }> {
  const counts = new Map<string, Map<CountedKernelState, number>>();
  const row = (host: string) => {
    let states = counts.get(host);
    if (!states) counts.set(host, (states = new Map(KERNEL_STATES.map((state) => [state, 0]))));
    return states;
  };
  for (const host of hostIds) row(host);
  for (const kernel of kernels) {
    if (!isCounted(kernel.state)) continue;
    const states = row(kernel.hostId ?? UNKNOWN_HOST);
    states.set(kernel.state, (states.get(kernel.state) ?? 0) + 1);
  }
  return [...counts].flatMap(([host, states]) => [...states].map(([state, value]) => ({ host, state, value })));
}

/**
 * Each host's GPU queue as this server sees it: how many of its kernels
 * wait, and how long the one waiting longest has (0 when none waits).
 * `since` is when a notebook's kernel began waiting (seen in its status events).
 */
export function gpuQueues(
  kernels: Iterable<KernelFact>,
  hostIds: readonly string[],
  since: (notebookId: string) => number | undefined,
  now: number,
): Array<{ host: string; kernels: number; oldestWaitSeconds: number }> {
  const queues = new Map<string, { kernels: number; oldestWaitSeconds: number }>(hostIds.map((host) => [host, { kernels: 0, oldestWaitSeconds: 0 }]));
  for (const kernel of kernels) {
    if (!kernel.queued) continue;
    const host = kernel.hostId ?? UNKNOWN_HOST;
    const queue = queues.get(host) ?? { kernels: 0, oldestWaitSeconds: 0 };
    queue.kernels += 1;
    const began = since(kernel.notebookId);
    if (began !== undefined) queue.oldestWaitSeconds = Math.max(queue.oldestWaitSeconds, Math.max(0, now - began) / 1000);
    queues.set(host, queue);
  }
  return [...queues].map(([host, queue]) => ({ host, ...queue }));
}

/** GPUs free and held per host, from each host's last health answer; a host that never answered has no row (unknown is not 0). */
export function gpuCounts(views: readonly HostView[]): Array<{ host: string; free: number; held: number }> {
  return views
    .filter((view) => view.gpuSource !== null)
    .map((view) => {
      const held = view.gpus.filter((gpu) => gpu.heldBy !== null).length;
      return { host: view.id, free: view.gpus.length - held, held };
    });
}
